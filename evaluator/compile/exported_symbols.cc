#include "evaluator/compile/exported_symbols.h"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "fmt/format.h"

namespace sparseditto {
namespace {

template <typename T>
bool ReadAt(const std::string& bytes, uint64_t offset, T* out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(out, bytes.data() + offset, sizeof(T));
  return true;
}

bool IsStdName(const std::string& name) {
  for (const char* prefix : {"_ZNSt", "_ZSt", "_ZNKSt", "_ZNVSt", "_ZNKVSt", "_ZNRSt", "_ZNOSt"}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// Defined by the linker itself in some binutils versions; not the candidate's doing.
bool IsLinkerSymbol(const std::string& name) {
  for (const char* linker : {"_edata", "_end", "__bss_start", "_init", "_fini"}) {
    if (name == linker) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::vector<ExportedSymbol>> ReadExportedSymbols(const std::string& library_path) {
  std::ifstream in(library_path, std::ios::binary);
  if (!in) return absl::NotFoundError(fmt::format("cannot open {}", library_path));
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto bad = [&](const char* why) {
    return absl::InvalidArgumentError(fmt::format("{}: not a usable ELF64 shared library ({})", library_path, why));
  };
  Elf64_Ehdr header;
  if (!ReadAt(bytes, 0, &header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) return bad("no ELF header");
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB) return bad("not ELF64 LE");
  if (header.e_type != ET_DYN || header.e_shentsize != sizeof(Elf64_Shdr)) return bad("not a shared object");

  std::vector<ExportedSymbol> symbols;
  for (uint16_t s = 0; s < header.e_shnum; ++s) {
    Elf64_Shdr section;
    if (!ReadAt(bytes, header.e_shoff + uint64_t{s} * sizeof(Elf64_Shdr), &section)) return bad("section table");
    if (section.sh_type != SHT_DYNSYM) continue;
    Elf64_Shdr strings;
    if (!ReadAt(bytes, header.e_shoff + uint64_t{section.sh_link} * sizeof(Elf64_Shdr), &strings)) {
      return bad("string table");
    }
    if (strings.sh_offset > bytes.size() || bytes.size() - strings.sh_offset < strings.sh_size) {
      return bad("string table bounds");
    }
    for (uint64_t offset = 0; offset + sizeof(Elf64_Sym) <= section.sh_size; offset += sizeof(Elf64_Sym)) {
      Elf64_Sym symbol;
      if (!ReadAt(bytes, section.sh_offset + offset, &symbol)) return bad("symbol table bounds");
      const unsigned bind = ELF64_ST_BIND(symbol.st_info);
      const unsigned visibility = ELF64_ST_VISIBILITY(symbol.st_other);
      if (symbol.st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE) ||
          (visibility != STV_DEFAULT && visibility != STV_PROTECTED) || symbol.st_name >= strings.sh_size) {
        continue;
      }
      const char* name = bytes.data() + strings.sh_offset + symbol.st_name;
      const size_t max_length = strings.sh_size - symbol.st_name;
      symbols.push_back({std::string(name, strnlen(name, max_length)), bind != STB_GLOBAL,
                         ELF64_ST_TYPE(symbol.st_info) == STT_GNU_IFUNC});
    }
  }
  return symbols;
}

std::vector<std::string> CandidateExportProblems(const std::vector<ExportedSymbol>& symbols) {
  std::vector<std::string> problems;
  for (const char* required : {"sparseditto_prepare", "sparseditto_run", "sparseditto_release", "sparseditto_abi_version"}) {
    bool found = false;
    for (const ExportedSymbol& s : symbols) found |= s.name == required;
    if (!found) problems.push_back(fmt::format("the library does not export {} (see kernel_abi/sparseditto_kernel.h)", required));
  }
  for (const ExportedSymbol& s : symbols) {
    if (s.ifunc) {
      problems.push_back(fmt::format("the library exports the ifunc '{}' (code run at load time)", s.name));
    } else if (s.name.rfind("sparseditto_", 0) == 0 || IsLinkerSymbol(s.name)) {
      continue;
    } else if (s.name.rfind("_Z", 0) != 0) {
      problems.push_back(fmt::format("the library exports the C symbol '{}', which could interpose on the harness; "
                                     "make it static or leave it hidden", s.name));
    } else if (IsStdName(s.name) && !s.weak) {
      problems.push_back(fmt::format("the library defines '{}' in namespace std, which could interpose on the "
                                     "harness", s.name));
    }
  }
  return problems;
}

}  // namespace sparseditto
