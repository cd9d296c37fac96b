// Reading `ptxas -v` output (in nvcc's log) into per-kernel resource records, and trimming logs.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "eval_result.pb.h"

namespace sparseditto {

// One record per "ptxas info : Compiling entry function 'X' for 'sm_NN'" line, filled from the
// lines that follow it for that entry:
//   "Function properties for X" / "N bytes stack frame, N bytes spill stores, N bytes spill loads"
//   "Used N registers, [used N barriers,] [N bytes smem,] N bytes cmem[0]..."
// kernel_name is the demangled name without return type and parameters
// ("(anonymous namespace)::CsrSpmm<float>"), or the mangled one if it does not demangle;
// spill_bytes is the spill stores. Properties of non-entry functions and unknown lines are ignored;
// fields never reported stay 0.
std::vector<v1::KernelResources> ParsePtxasResources(std::string_view log);

// `log` if it fits in `max_bytes`, else its first 3/4 and last 1/4 around a line saying how many
// bytes were cut (errors come first, and the end says how it finished).
std::string TrimLog(std::string_view log, size_t max_bytes);

}  // namespace sparseditto
