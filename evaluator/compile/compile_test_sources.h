// Test support for the nvcc compiler and pool tests: small candidate sources, a scratch folder, and a
// look for processes left behind by a killed compile.
#pragma once

#include <string>
#include <string_view>

namespace sparseditto::testing {

// A complete, tiny candidate whose kernel writes `value` (a C++ float expression) into C.
std::string TinyCandidate(std::string_view value);

// A candidate with a syntax error on line 3.
extern const char kSyntaxErrorCandidate[];

// A source whose compile takes hours on little memory: 100000 template instantiations, each running a
// constexpr loop just under the front end's complexity limit.
extern const char kCompileBombCandidate[];

// A fresh folder under the temp dir, removed (recursively) by the destructor.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Live (not zombie) processes, other than this one, whose command line mentions `text`.
int LiveProcessesMentioning(std::string_view text);

}  // namespace sparseditto::testing
