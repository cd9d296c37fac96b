// A CPU-only stand-in for sparseditto-runner that speaks the real protocol (proto/runner.proto) and
// misbehaves on request, so the evaluator's supervision of its child can be tested where there is no
// GPU. What it does is chosen by the candidate id's prefix:
//   ok       stage events, then a correct result whose failure_detail is "pid=<its pid>"
//   abort    abort() during SMOKE               exit      exit(0) during SMOKE without a reply
//   segv     SIGSEGV during TIMING              hang      sleeps forever during FULL_CORRECTNESS
//   lost     a reply with context_lost, then exit(3)
//   garbage  a frame that does not parse        memory    touches 2 GiB of host memory, then sleeps
//   flood    writes 8 MiB to stdout, then replies ok
//   mark=P   replies ok; at a clean exit (end of input) creates the file P
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "evaluator/runner/framing.h"
#include "runner.pb.h"

namespace {

using sparseditto::v1::EvalStage;

void Stage(EvalStage stage) {
  sparseditto::v1::RunnerEvent event;
  event.set_stage_entered(stage);
  (void)sparseditto::WriteFrame(4, event);
}

bool Starts(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

int main() {
  using namespace sparseditto;
  v1::RunnerRequest request;
  std::string exit_marker;
  while (ReadFrame(3, &request).ok()) {
    v1::RunnerEvent reply;
    if (request.has_setup_task()) {
      reply.mutable_setup_task()->set_ok(true);
      reply.mutable_setup_task()->set_gpu_name("fake");
      reply.mutable_setup_task()->set_matrix_rows(64);  // what the finalist sanitizers are told the shape is
      reply.mutable_setup_task()->set_matrix_cols(96);
      (void)WriteFrame(4, reply);
      continue;
    }
    const std::string id = request.evaluate().candidate_id();
    if (Starts(id, "mark=")) exit_marker = id.substr(5);
    Stage(sparseditto::v1::EVAL_STAGE_SMOKE);
    if (Starts(id, "abort")) std::abort();
    if (Starts(id, "exit")) std::exit(0);
    Stage(sparseditto::v1::EVAL_STAGE_FULL_CORRECTNESS);
    if (Starts(id, "hang")) {
      while (true) pause();
    }
    if (Starts(id, "memory")) {
      std::vector<char> big(size_t{2} << 30);
      for (size_t i = 0; i < big.size(); i += 4096) big[i] = 1;
      while (true) pause();
    }
    Stage(sparseditto::v1::EVAL_STAGE_TIMING);
    if (Starts(id, "segv")) std::raise(SIGSEGV);
    if (Starts(id, "garbage")) {
      (void)!write(4, "\x05\x00\x00\x00\xff\xff\xff\xff\xff", 9);
      while (true) pause();
    }
    if (Starts(id, "flood")) {
      const std::string chunk(1 << 16, 'x');
      for (int i = 0; i < 128; ++i) (void)!write(1, chunk.data(), chunk.size());
    }
    v1::EvalResult* result = reply.mutable_evaluate();
    result->set_candidate_id(id);
    result->set_stage_reached(sparseditto::v1::EVAL_STAGE_DONE);
    result->set_fitness(1.5);
    result->set_failure_detail("pid=" + std::to_string(getpid()));
    reply.set_context_lost(Starts(id, "lost"));
    (void)WriteFrame(4, reply);
    if (reply.context_lost()) return 3;
  }
  if (!exit_marker.empty()) std::ofstream(exit_marker) << "clean exit\n";
  return 0;
}
