// One model of a mutator service (`sparseditto mutator`, issue 25 item 3): a session with the
// coordinator (model_work.h) for that model, `concurrency` threads that each pull one chat job at a
// time, ask the model through this machine's client (its endpoint and API key: they never leave this
// process) and report the answer, and a heartbeat that names the jobs in hand. It reconnects with
// backoff and jitter while the coordinator is away, registers again when its session ended, and on
// Drain (SIGTERM) finishes what it asks now, reports it and stops.
// An answer that cannot be reported (the coordinator away for longer than a few tries) is dropped:
// the coordinator's request times out and the search's LLM mutation fails, which is what a lost
// model call is anyway (LLM mutations are not replayed).
// Ownership: borrows `client` (thread-safe, as every ChatClient) for the node's life.
// Thread-safety: Run on one thread; Drain and counts from any.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "llm_mutator/chat_client.h"
#include "services.grpc.pb.h"

namespace sparseditto::llm {

struct MutatorNodeOptions {
  std::string name;   // this service's name in the coordinator's logs ("<host>/mutator")
  std::string model;  // the MutatorSpec name it answers for
  int concurrency = 1;
  std::string token;  // a mutator token
  absl::Duration call_timeout = absl::Seconds(30);   // every call but the long poll
  absl::Duration pull_wait = absl::Seconds(20);      // the long poll's wait
  absl::Duration initial_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(10);
  uint64_t jitter_seed = 1;
  std::function<void(const std::string&)> on_event;  // for its log; from any of its threads
};

struct MutatorNodeCounts {
  int64_t asked = 0;        // chat jobs answered by the model (any outcome)
  int64_t accepted = 0;     // answers the coordinator took
  int64_t not_taken = 0;    // duplicate, stale or not held
  int64_t dropped = 0;      // answers that could not be reported
  int64_t registrations = 0;
};

class MutatorNode {
 public:
  MutatorNode(std::shared_ptr<grpc::Channel> channel, ChatClient* client, MutatorNodeOptions options);
  // Until drained (Drain, or the coordinator's drain). Errors: the coordinator refused this service
  // for good (a bad token, a wrong role, an invalid registration), with its status.
  absl::Status Run();
  void Drain();
  MutatorNodeCounts counts() const;

 private:
  absl::Status Register();              // until it succeeds, drains or is refused for good
  void Work();                          // one puller thread
  void Heartbeats();
  void Report(const v1::ChatGrant& grant, const ChatResult& result);
  std::unique_ptr<grpc::ClientContext> Context(absl::Duration timeout) const;
  void Backoff(int* failures);
  std::string Session() const;
  bool draining() const { return draining_.HasBeenNotified(); }

  std::unique_ptr<v1::MutatorWorkService::Stub> stub_;
  ChatClient* client_;
  const MutatorNodeOptions options_;
  absl::Notification draining_;
  std::once_flag drain_once_;  // Notify may be called once only; several threads may ask for a drain
  std::atomic<uint64_t> jitter_{0};

  mutable absl::Mutex mutex_;
  std::string session_id_ ABSL_GUARDED_BY(mutex_);
  absl::Duration heartbeat_interval_ ABSL_GUARDED_BY(mutex_) = absl::Seconds(10);
  bool session_lost_ ABSL_GUARDED_BY(mutex_) = false;
  absl::Status refused_ ABSL_GUARDED_BY(mutex_);
  std::set<std::string> holding_ ABSL_GUARDED_BY(mutex_);
  std::set<grpc::ClientContext*> polls_ ABSL_GUARDED_BY(mutex_);  // long polls in flight: cancelled by Drain
  MutatorNodeCounts counts_ ABSL_GUARDED_BY(mutex_);
  absl::Mutex register_mutex_;  // one thread registers again at a time
};

}  // namespace sparseditto::llm
