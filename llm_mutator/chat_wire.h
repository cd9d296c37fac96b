// A chat attempt's result over the wire (proto/services.proto ChatAnswer), between the coordinator's
// remote model clients (coordinator/server/model_work.h) and the mutator services that ask the models.
// Pure functions; thread-safe.
#pragma once

#include "llm_mutator/chat_client.h"
#include "services.pb.h"

namespace sparseditto::llm {

v1::ChatAnswer ChatAnswerOf(const ChatResult& result);
// The result an answer stands for. An outcome name this build does not know is kMalformedResponse
// naming it (a newer mutator service), never a crash.
ChatResult ChatResultOf(const v1::ChatAnswer& answer);

}  // namespace sparseditto::llm
