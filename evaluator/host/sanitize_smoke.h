// The candidate host's mode for the finalist sanitizers: `sparseditto-candidate-host --sanitize
// REQUEST_FILE ROWS COLS` runs the candidate on the task's smoke problems, then on the first rows of the
// task's own matrix at every n of the task (MakeTaskCropCase: the tiles the task's widths select), in this one process, on
// buffers of its own, under compute-sanitizer (which the evaluator wraps around it, so only this
// process and the candidate's kernels are instrumented). There is no judge here and nothing is
// checked for correctness: the candidate already passed the judged cascade; this run exists for the
// tool's findings (out-of-bounds and misaligned accesses, races, reads of uninitialised memory),
// which the evaluator reads from the tool's exit code. It runs in the judged host's sandbox: the evaluator spawns
// the tool inside the spawn-time layers, and this process applies the in-process ones (SPARSEDITTO_HOST_LOCKDOWN)
// before it loads the candidate, as the judged host does. A candidate could tamper with the tool's
// injection in its own process to hide findings; it can no longer forge a verdict or a time (those
// are the judge's).
#pragma once

namespace sparseditto {

// argv: REQUEST_FILE (a framed RunnerRequest{evaluate} as the evaluator writes it) ROWS COLS (the
// task matrix's shape, for the smoke problems; the crop's matrix is made here from the request's task, before
// the candidate is loaded). Exit 0 when every call returned 0, 3 when the
// candidate failed a call or a CUDA call failed (the message on stderr), 2 for bad arguments.
int RunSanitizeSmoke(int argc, char** argv);

}  // namespace sparseditto
