#include "coordinator/search/export_wrapper.h"

#include <cctype>
#include <map>
#include <regex>

#include "evaluator/compile/nvcc_compiler.h"
#include "fmt/format.h"
#include "mutators/plan/plan_composer.h"
#define SPARSEDITTO_HARNESS  // declarations only: this library must not define sparseditto_abi_version
#include "sparseditto_weight_check.h"

namespace sparseditto {
namespace {

constexpr std::string_view kDefaultVisibility =
    "#define SPARSEDITTO_EXPORT SPARSEDITTO_EXTERN_C __attribute__((visibility(\"default\")))\n";
constexpr std::string_view kHiddenVisibility =
    "#define SPARSEDITTO_EXPORT SPARSEDITTO_EXTERN_C __attribute__((visibility(\"hidden\")))\n";

// 'x' -> "'x'", ' -> '\''.
std::string ShellQuote(std::string_view word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string ExportSymbol(std::string_view task_name) {
  std::string out;
  for (char c : task_name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "t_" + out;
  return out;
}

absl::Status CheckExportSymbols(const std::vector<std::string>& task_names) {
  std::map<std::string, std::string> symbols;  // symbol -> the first task that gives it
  for (const std::string& name : task_names) {
    auto [it, inserted] = symbols.emplace(ExportSymbol(name), name);
    if (!inserted) {
      return absl::InvalidArgumentError(
          fmt::format("tasks {} and {} would both export {}_prepare; rename one", it->second, name, it->first));
    }
  }
  return absl::OkStatus();
}

std::string WeightSpecInitializer(const v1::Task& task, const CsrMatrix& searched) {
  const v1::PatternSpec& p = task.pattern();
  int64_t row_unit = 1, col_unit = 1;  // as evaluator/runner/smoke_cases.cc holds a kernel to them
  if (p.family() == v1::PATTERN_FAMILY_BLOCK) {
    row_unit = p.block_rows();
    col_unit = p.block_cols();
  } else if (p.family() == v1::PATTERN_FAMILY_N_M) {
    col_unit = p.m();
  } else if (p.family() == v1::PATTERN_FAMILY_BLOCK_DIAGONAL) {
    row_unit = col_unit = p.num_blocks();
  }
  if (row_unit < 1 || searched.rows % row_unit != 0) row_unit = 1;
  if (col_unit < 1 || searched.cols % col_unit != 0) col_unit = 1;
  const bool exact = task.matrix().has_file();
  std::vector<std::string> digests;
  for (int chunk = 0; chunk < SD_WEIGHT_DIGEST_CHUNKS; ++chunk) {
    const uint64_t digest = !exact ? 0
        : sd_structure_digest(searched.row_offsets.data(), searched.col_indices.data(),
                              sd_digest_chunk_begin(searched.rows, chunk), sd_digest_chunk_begin(searched.rows, chunk + 1));
    digests.push_back(fmt::format("0x{:016x}ull", digest));
  }
  return fmt::format(
      "{{/*dtype=*/{}, /*pattern=*/{{{}, {:.9g}, {}, {}, {}, {}, {}, {}}}, /*row_unit=*/{}, /*col_unit=*/{},\n"
      " /*exact=*/{}, /*rows=*/{}, /*cols=*/{}, /*nnz=*/{},\n /*chunk_digests=*/{{{}}}}}",
      static_cast<int>(task.dtype()), static_cast<int>(p.family()), p.sparsity(), p.block_rows(), p.block_cols(),
      p.n(), p.m(), p.half_bandwidth(), p.num_blocks(), row_unit, col_unit, exact ? 1 : 0,
      exact ? searched.rows : 0, exact ? searched.cols : 0, exact ? searched.nnz() : 0, fmt::join(digests, ", "));
}

absl::StatusOr<std::string> WrapForExport(std::string_view source, std::string_view symbol,
                                          std::string_view weight_spec_initializer) {
  absl::StatusOr<SourcePrologue> split = SplitLeadingIncludes(source);
  if (!split.ok()) return absl::InvalidArgumentError(fmt::format("cannot wrap the kernel: {}", std::string(split.status().message())));
  const std::string ns = fmt::format("sd_export_{}", symbol);
  std::string out =
      "// SPARSEDITTO_HARNESS: the ABI header only declares; each export defines its own <task>_abi_version.\n"
      "#define SPARSEDITTO_HARNESS\n"
      "#include \"sparseditto_kernel.h\"\n"
      "#include \"sparseditto_weight_check.h\"\n";
  for (const std::string& line : split->includes) {
    if (line != "#include \"sparseditto_kernel.h\"") out += line + "\n";
  }
  out += "\n// The kernel, its names its own (namespace) and its ABI functions renamed and hidden.\n#undef SPARSEDITTO_EXPORT\n";
  out += kHiddenVisibility;
  out += fmt::format(
      "namespace {0} {{\n"
      "SPARSEDITTO_EXPORT int {0}_prepare(const sd_problem* problem, void** state, char* error, size_t error_capacity);\n"
      "SPARSEDITTO_EXPORT int {0}_run(void* state, const void* B, void* C, int64_t n, cudaStream_t stream);\n"
      "SPARSEDITTO_EXPORT void {0}_release(void* state);\n"
      "SPARSEDITTO_EXPORT uint32_t {0}_layouts(void);\n",
      ns);
  // The ABI names, and a composed plan's C names of its variants (sd_plan_v0_prepare, ...), renamed as
  // words (not by macros: a plan #undefs its own renames of the ABI names).
  // Whether the kernel has a layouts mask of its own (else it serves KN only: sparseditto_kernel.h).
  const bool has_layouts = std::regex_search(split->body, std::regex(R"(\bsparseditto_layouts\b)"));
  std::string body = std::regex_replace(
      split->body, std::regex(R"(\bsparseditto_(prepare|run|release|abi_version|layouts)\b)"), ns + "_$1");
  body = std::regex_replace(body, std::regex(R"(\bsd_plan_)"), ns + "_plan_");
  // A composed plan restores the default visibility for its dispatcher's entries: they stay hidden here.
  for (size_t at = body.find(kDefaultVisibility); at != std::string::npos; at = body.find(kDefaultVisibility, at)) {
    body.replace(at, kDefaultVisibility.size(), kHiddenVisibility);
  }
  if (!body.empty() && body.back() != '\n') body += '\n';
  out += body + fmt::format("}}  // namespace {}\n", ns);
  for (const std::string& macro : split->macros) out += fmt::format("#undef {}\n", macro);
  out += "#undef SPARSEDITTO_EXPORT\n";
  out += kDefaultVisibility;
  out += fmt::format(
      "\n// The exported entries: prepare checks the weight against what the kernel was searched for, and the\n"
      "// layout against the kernel's mask.\n"
      "namespace {0}_entry {{\n"
      "const sd_weight_spec kSearchedFor = {2};\n"
      "}}  // namespace {0}_entry\n\n"
      "SPARSEDITTO_EXPORT uint32_t {1}_layouts(void) {{ return {3}; }}\n"
      "SPARSEDITTO_EXPORT int {1}_prepare(const sd_problem* problem, void** state, char* error, size_t error_capacity) {{\n"
      "  if (sd_check_weight(problem, &{0}_entry::kSearchedFor, error, error_capacity) != 0) return 1;\n"
      "  if (problem->layout < 0 || problem->layout > 31 || !({1}_layouts() & SPARSEDITTO_LAYOUT_BIT(problem->layout))) {{\n"
      "    if (error != nullptr && error_capacity > 0) {{\n"
      "      snprintf(error, error_capacity, \"layout %d: this kernel serves the layouts of mask 0x%x \"\n"
      "                    \"(bit 0 KN: B [K x n], C [M x n]; bit 1 NK: X [n x K], Y [n x M])\", problem->layout,\n"
      "                    {1}_layouts());\n"
      "    }}\n"
      "    return 1;\n"
      "  }}\n"
      "  return {0}::{0}_prepare(problem, state, error, error_capacity);\n"
      "}}\n"
      "SPARSEDITTO_EXPORT int {1}_run(void* state, const void* B, void* C, int64_t n, cudaStream_t stream) {{\n"
      "  return {0}::{0}_run(state, B, C, n, stream);\n"
      "}}\n"
      "SPARSEDITTO_EXPORT void {1}_release(void* state) {{ {0}::{0}_release(state); }}\n"
      "SPARSEDITTO_EXPORT int {1}_abi_version(void) {{ return SPARSEDITTO_ABI_VERSION; }}\n",
      ns, symbol, weight_spec_initializer,
      has_layouts ? fmt::format("{0}::{0}_layouts()", ns) : std::string("SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN)"));
  return out;
}

std::string ExportDeclarations(std::string_view symbol) {
  return fmt::format(
      "// The entries of an exported SparseDitto kernel ({0}.cu): the kernel ABI of sparseditto_kernel.h,\n"
      "// each function named {0}_*. {0}_prepare first checks the weight (sparseditto_weight_check.h) and\n"
      "// fails with \"weight check: ...\" naming what differs from the pattern the kernel was searched for.\n"
      "#pragma once\n"
      "#ifndef SPARSEDITTO_HARNESS\n"
      "#define SPARSEDITTO_HARNESS  // declarations only\n"
      "#endif\n"
      "#include \"sparseditto_kernel.h\"\n\n"
      "SPARSEDITTO_EXTERN_C int {0}_prepare(const sd_problem* problem, void** state, char* error, size_t error_capacity);\n"
      "SPARSEDITTO_EXTERN_C int {0}_run(void* state, const void* B, void* C, int64_t n, cudaStream_t stream);\n"
      "SPARSEDITTO_EXTERN_C void {0}_release(void* state);\n"
      "SPARSEDITTO_EXTERN_C int {0}_abi_version(void);\n"
      "// The layouts {0}_run serves (bit SPARSEDITTO_LAYOUT_BIT(sd_layout)); {0}_prepare refuses another.\n"
      "SPARSEDITTO_EXTERN_C uint32_t {0}_layouts(void);\n",
      symbol);
}

absl::StatusOr<std::vector<std::string>> ExportNvccFlags(const v1::Task& task) {
  CompileOptions options;  // the evaluator's defaults, with the task's archs (Evaluator::CompileOptionsFor)
  options.abi_include_dir = ".";
  if (task.arch_size() > 0) options.archs.assign(task.arch().begin(), task.arch().end());
  return NvccFlags(options);
}

std::string BuildScript(const std::vector<ExportedFile>& files) {
  std::string cases, all;
  for (const ExportedFile& f : files) {
    const std::string object = f.cu_file.substr(0, f.cu_file.rfind('.')) + ".o";
    std::string command = "\"$NVCC\"";
    for (const std::string& flag : f.flags) command += " " + ShellQuote(flag);
    cases += fmt::format("    {}) {} -c -o {} {} ;;\n", ShellQuote(f.cu_file), command, ShellQuote(object),
                         ShellQuote(f.cu_file));
    all += " " + ShellQuote(f.cu_file);
  }
  std::string libraries;
  for (std::string_view lib : kCandidateLibraries) libraries += fmt::format(" {}", lib);
  return fmt::format(
      "#!/bin/sh\n"
      "# Written by `sparseditto export`: builds the exported kernels of this folder into ONE shared library,\n"
      "# each with the nvcc flags the evaluator compiled it with and linked with the libraries it was.\n"
      "#   ./build.sh [-o LIB] [FILE.cu ...]   (LIB default libsparseditto_kernels.so, in this folder;\n"
      "#                                       files default: every export below; NVCC=path/to/nvcc)\n"
      "set -eu\n"
      "cd \"$(dirname \"$0\")\"\n"
      "NVCC=\"${{NVCC:-nvcc}}\"\n"
      "LIB=libsparseditto_kernels.so\n"
      "if [ \"${{1:-}}\" = \"-o\" ]; then LIB=\"$2\"; shift 2; fi\n"
      "[ $# -gt 0 ] || set --{}\n"
      "objects=\"\"\n"
      "for file in \"$@\"; do\n"
      "  case \"$file\" in\n"
      "{}"
      "    *) echo \"build.sh: $file is not an export of this folder:{}\" >&2; exit 2 ;;\n"
      "  esac\n"
      "  objects=\"$objects ${{file%.cu}}.o\"\n"
      "done\n"
      "# shellcheck disable=SC2086 # the object names are task names: [A-Za-z0-9._-]\n"
      "\"$NVCC\" -shared -o \"$LIB\" $objects{}\n"
      "echo \"$LIB\"\n",
      all, cases, all, libraries);
}

}  // namespace sparseditto
