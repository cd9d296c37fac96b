// Reading compute-sanitizer's output (the finalist stage, evaluator.cc). Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sparseditto {

// What a racecheck run reported, when every hazard lies wholly inside kernels the candidate did not write.
struct LibraryRaceHazards {
  int reports = 0;                   // hazard reports displayed (each may stand for many hazards)
  std::vector<std::string> kernels;  // the kernels they lie in, sorted, each once
};

// `output`: everything racecheck printed (the candidate host's own lines may be mixed in, and are skipped when
// they lack the tool's "========= " prefix). Returns the hazards when racecheck reported at least one and every
// report is a race between accesses at functions whose names begin with one of `library_kernel_prefixes`
// (e.g. cuBLAS's "nvjet_"), every report was displayed (its summary's count of displayed hazards equals its
// errors plus warnings), and the tool said nothing else (no other error kind, no internal error, no backtrace).
// nullopt otherwise: no summary, a hazard in any other function (a candidate's function is "name(args)+0x.. in
// file:line"), fewer reports displayed than counted, or any line of the tool's it does not know.
// Not a trust boundary: the candidate runs in the process the tool watches and could print such lines itself.
std::optional<LibraryRaceHazards> RaceHazardsOnlyInLibraryKernels(std::string_view output,
                                                                  const std::vector<std::string>& library_kernel_prefixes);

// Why racecheck's kernel names cannot be taken as NVIDIA's for this candidate `source`, or nullopt when they can:
// "loads code at run time (cudaLibraryLoadData, line 12)" when it names a run-time module or code loader
// (cudaLibraryLoad*, cudaGetDriverEntryPoint*, cuModuleLoad*, cuLibraryLoad*, cuLink*, cuGetProcAddress*, nvrtc*,
// nvJitLink*, nvPTXCompiler*), whose kernels carry whatever names it gives them and no line of candidate.cu; "names
// an identifier like a library kernel (nvjet_x, line 5)" when an identifier of its own begins with one of
// `library_kernel_prefixes`. On the spelled source's tokens (source_lexer.h): the static screen refuses token
// pasting and dlsym, so such a name cannot be assembled unspelled; a kernel compiled from candidate.cu reports
// "in candidate.cu:N" (-lineinfo) and is counted whatever its name.
std::optional<std::string> WhyLibraryKernelNamesAreNotTrusted(std::string_view source,
                                                              const std::vector<std::string>& library_kernel_prefixes);

}  // namespace sparseditto
