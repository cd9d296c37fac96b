// Exit codes of the sparseditto binary.
#pragma once

namespace sparseditto {

inline constexpr int kExitSuccess = 0;
inline constexpr int kExitFailure = 1;  // the command ran and the answer is "no" or an input was bad
inline constexpr int kExitUsage = 2;    // the command line itself was wrong

}  // namespace sparseditto
