// HostPreprocessArguments, and NvccCompiler::PreprocessHost (declared in nvcc_compiler.h), which runs
// them through the compile's own spawn path (NvccCompiler::RunNvcc).
#include "evaluator/compile/host_preprocess.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/status_macros.h"
#include "evaluator/compile/nvcc_compiler.h"
#include "evaluator/compile/ptxas_report.h"
#include "evaluator/compile/static_screen.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;

constexpr double kMaxPreprocessSeconds = 30;
constexpr uintmax_t kMaxPreprocessedBytes = 64 << 20;  // cuda_runtime.h alone is about 2 MB
constexpr size_t kMaxLogBytes = 16 * 1024;

absl::StatusOr<std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::FailedPreconditionError(fmt::format("cannot read {}", path));
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

std::vector<std::string> DeviceOnlyMacros(const std::vector<std::string>& archs) {
  std::vector<std::string> macros = {"__CUDA_ARCH__", "CUDA_DOUBLE_MATH_FUNCTIONS", "__CUDA_ARCH_SPECIFIC__",
                                     "__CUDA_ARCH_FAMILY_SPECIFIC__"};
  for (const std::string& arch : archs) {
    std::string digits;
    for (char c : arch.substr(std::min<size_t>(3, arch.size()))) {
      if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
    }
    const std::string feature = fmt::format("__CUDA_ARCH_FEAT_SM{}_ALL", digits);
    if (!digits.empty() && std::find(macros.begin(), macros.end(), feature) == macros.end()) macros.push_back(feature);
  }
  return macros;
}

std::vector<std::string> HostPreprocessArguments(const std::vector<std::string>& archs) {
  std::string undefine;
  for (const std::string& macro : DeviceOnlyMacros(archs)) undefine += (undefine.empty() ? "-U" : ",-U") + macro;
  return {"-E", "-Xcompiler", undefine, "-o", "candidate.ii", "candidate.cu"};
}

absl::StatusOr<PreprocessResult> NvccCompiler::PreprocessHost(std::string_view source, const CompileOptions& given) const {
  if (given.abi_include_dir.empty()) return absl::InvalidArgumentError("CompileOptions.abi_include_dir is required");
  if (!(given.timeout_seconds > 0)) return absl::InvalidArgumentError("CompileOptions.timeout_seconds must be > 0");
  CompileOptions options = given;  // as Compile: the include path absolute
  options.abi_include_dir = fs::absolute(given.abi_include_dir).lexically_normal().string();
  options.timeout_seconds = std::min(given.timeout_seconds, kMaxPreprocessSeconds);
  SD_ASSIGN_OR_RETURN(const std::vector<std::string> flags, NvccFlags(options));
  SD_ASSIGN_OR_RETURN(const std::string abi_header, ReadText(options.abi_include_dir + "/sparseditto_kernel.h"));
  PreprocessResult result;
  const auto collect = [&result](const std::string& work, const CommandResult& run) -> absl::Status {
    if (!run.outcome.success()) return absl::OkStatus();
    std::error_code error;
    const uintmax_t size = fs::file_size(work + "/candidate.ii", error);
    if (error || size > kMaxPreprocessedBytes) {
      result.log = fmt::format("the preprocessed source is missing or over {} bytes", kMaxPreprocessedBytes);
      return absl::OkStatus();
    }
    SD_ASSIGN_OR_RETURN(result.text, ReadText(work + "/candidate.ii"));
    result.ok = true;
    return absl::OkStatus();
  };
  SD_ASSIGN_OR_RETURN(const CommandResult run,
                      RunNvcc(source, abi_header, flags, HostPreprocessArguments(options.archs), options, collect));
  result.timed_out = run.outcome.kind == ExitOutcome::Kind::kTimedOut;
  if (result.timed_out) {
    result.log = fmt::format("nvcc -E did not finish in {:g} s", options.timeout_seconds);
  } else if (!run.outcome.success()) {
    result.log = fmt::format("nvcc -E {}:\n{}", run.outcome.ToString(), TrimLog(run.stdout_output.bytes, kMaxLogBytes));
  }
  if (!result.ok) result.text.clear();
  return result;
}

absl::Status ScreenCandidate(const NvccCompiler& compiler, std::string_view source, const CompileOptions& options,
                             bool* settled) {
  bool ignored = false;
  bool& final = settled != nullptr ? *settled : ignored;
  final = true;
  if (absl::Status spelling = ScreenCandidateSource(source); !spelling.ok()) return spelling;
  absl::StatusOr<PreprocessResult> unit = compiler.PreprocessHost(source, options);
  final = unit.ok() && !unit->timed_out;
  if (!unit.ok() || (!unit->ok && !unit->timed_out)) return absl::OkStatus();
  if (unit->timed_out) return absl::PermissionDeniedError(unit->log + " (a candidate must preprocess within the limit)");
  return ScreenPreprocessedSource(unit->text);
}

}  // namespace sparseditto
