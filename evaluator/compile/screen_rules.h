// The static screen's tables: which names, headers and attributes a candidate may not use, and why.
// Kept apart from the matching logic (static_screen.cc) so the policy reads as one list.
// Pure functions over constant tables; thread-safe.
#pragma once

#include <string_view>

namespace sparseditto {

// A name refused as an identifier (unless it is a member access or qualified by a non-std namespace).
struct BannedName {
  std::string_view name;
  std::string_view reason;         // the category, e.g. "process creation"
  bool calls_only = false;         // refused only when followed by '(' (a common word as a variable is fine)
  int only_with_arguments = -1;    // >= 0: refused only when called with exactly this many arguments
};

// The entry for `name` (names starting with glibc's internal prefixes, __libc_, _dl_, __GI_, share
// one entry whose name is empty), or nullptr.
const BannedName* FindBannedName(std::string_view name);

// asm, __asm, __asm__.
bool IsAsmKeyword(std::string_view name);

// CUDA runtime, driver and library names (cudaMalloc, cuLaunchKernel, __cudaRegisterFunction,
// cublasSgemm, cusparseSpMM, nvrtcCompileProgram, ...), whose definition could interpose on them.
bool IsCudaName(std::string_view name);

// fopen, fopen64, freopen, freopen64: allowed only with a literal read mode.
bool IsFopenName(std::string_view name);
// open, open64, openat, openat64: allowed only with O_RDONLY-like flags.
bool IsOpenName(std::string_view name);
bool IsReadOnlyOpenFlag(std::string_view name);

// return, throw, sizeof, struct, ...: words after which `x`, `*x` or `&x` is not a new variable.
bool IsExpressionKeyword(std::string_view name);

// constructor, destructor, section, init_priority, ifunc, alias, weakref, symver (without __ __).
bool IsRefusedAttribute(std::string_view name);

// Why <header> is refused, or nullptr when it is allowed.
const char* RefusedHeaderReason(std::string_view header);

}  // namespace sparseditto
