// A message's bytes, equal exactly when the messages are: protobuf's deterministic serialisation (map
// entries in key order), for keys and content hashes (a job's id, the task a worker has set up).
// Header-only; thread-safe.
#pragma once

#include <string>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/message_lite.h"

namespace sparseditto {

inline std::string DeterministicBytes(const google::protobuf::MessageLite& message) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  {
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }  // the coded stream gives back what it did not use as it goes
  return bytes;
}

}  // namespace sparseditto
