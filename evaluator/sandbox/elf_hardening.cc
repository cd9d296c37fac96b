#include "evaluator/sandbox/elf_hardening.h"

#include <elf.h>

#include <cstring>
#include <fstream>

#include "fmt/format.h"

namespace sparseditto {

std::string ElfHardening::ToString() const {
  if (full_relro()) return "full RELRO (PT_GNU_RELRO, BIND_NOW)";
  if (relro) return "partial RELRO (PT_GNU_RELRO without BIND_NOW: the GOT stays writable)";
  return bind_now ? "no RELRO (BIND_NOW without PT_GNU_RELRO)" : "no RELRO";
}

absl::StatusOr<ElfHardening> ReadElfHardening(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(fmt::format("cannot open {}", path));
  auto read_at = [&](uint64_t offset, void* out, size_t size) {
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(static_cast<char*>(out), static_cast<std::streamsize>(size));
    return static_cast<size_t>(in.gcount()) == size;
  };
  Elf64_Ehdr header{};
  if (!read_at(0, &header, sizeof header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    return absl::FailedPreconditionError(fmt::format("{} is not an ELF file", path));
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB) {
    return absl::FailedPreconditionError(fmt::format("{} is not a 64-bit little-endian ELF file", path));
  }
  if (header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phnum > 4096) {
    return absl::FailedPreconditionError(fmt::format("{}: unexpected program header table", path));
  }
  ElfHardening result;
  for (uint16_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (!read_at(header.e_phoff + uint64_t{i} * sizeof ph, &ph, sizeof ph)) {
      return absl::FailedPreconditionError(fmt::format("{}: truncated program header {}", path, i));
    }
    if (ph.p_type == PT_GNU_RELRO) result.relro = true;
    if (ph.p_type != PT_DYNAMIC) continue;
    const uint64_t count = std::min<uint64_t>(ph.p_filesz / sizeof(Elf64_Dyn), 1 << 16);
    for (uint64_t j = 0; j < count; ++j) {
      Elf64_Dyn dyn{};
      if (!read_at(ph.p_offset + j * sizeof dyn, &dyn, sizeof dyn)) {
        return absl::FailedPreconditionError(fmt::format("{}: truncated dynamic section", path));
      }
      if (dyn.d_tag == DT_NULL) break;
      if (dyn.d_tag == DT_BIND_NOW) result.bind_now = true;
      if (dyn.d_tag == DT_FLAGS && (dyn.d_un.d_val & DF_BIND_NOW)) result.bind_now = true;
      if (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_NOW)) result.bind_now = true;
    }
  }
  return result;
}

}  // namespace sparseditto
