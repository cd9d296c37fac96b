// Reading an ELF file's hardening: full RELRO is PT_GNU_RELRO (the GOT and other relocated data
// remapped read-only after relocation) together with immediate binding (DT_BIND_NOW, DF_BIND_NOW in
// DT_FLAGS or DF_1_NOW in DT_FLAGS_1), so no writable GOT slot remains through which a loaded
// library could redirect the binary's imports (issue 23: "patched the runner's imported functions").
//
// Thread-safety: thread-safe (reads the file only).
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace sparseditto {

struct ElfHardening {
  bool relro = false;     // PT_GNU_RELRO present
  bool bind_now = false;  // immediate binding
  bool full_relro() const { return relro && bind_now; }
  // "full RELRO (PT_GNU_RELRO, BIND_NOW)", "partial RELRO (no BIND_NOW)", "no RELRO".
  std::string ToString() const;
};

// Reads the program headers and the dynamic section of a 64-bit little-endian ELF file.
// Errors: NotFound (no such file), FailedPrecondition (not a 64-bit little-endian ELF, or truncated:
// the message says what).
absl::StatusOr<ElfHardening> ReadElfHardening(const std::string& path);

}  // namespace sparseditto
