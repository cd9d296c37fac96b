// The files of the PyTorch package template (torch_package/template, and the kernel ABI header the
// operators compile against), embedded in the binary at build time by torch_package/embed_files.cmake
// so that `sparseditto export --torch` needs nothing beside the executable. Thread-safe.
#pragma once

#include <string_view>
#include <vector>

namespace sparseditto {

struct EmbeddedFile {
  std::string_view name;      // a plain file name, e.g. "__init__.py"
  std::string_view contents;
};

const std::vector<EmbeddedFile>& TorchPackageFiles();

}  // namespace sparseditto
