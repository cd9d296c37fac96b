#include "evaluator/compile/nvcc_compiler.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <signal.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "common/owned_temp_folders.h"
#include "common/status_macros.h"
#include "common/subprocess.h"
#include "evaluator/sandbox/landlock.h"
#include "evaluator/sandbox/sandbox_child.h"
#include "evaluator/sandbox/sandbox_probe.h"
#include "evaluator/compile/exported_symbols.h"
#include "evaluator/compile/ptxas_report.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxLogBytes = 64 * 1024;
constexpr int64_t kMaxCapturedBytes = 4 << 20;  // parse ptxas lines from this much, keep kMaxLogBytes
constexpr char kAbiDirPlaceholder[] = "<abi>";  // the -I path does not change the output; its header does
constexpr std::chrono::seconds kCacheMinAge{3600};  // Trim spares entries used within the hour

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::FailedPreconditionError(fmt::format("cannot read {}", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::Status WriteWholeFile(const std::string& path, std::string_view data) {
  std::ofstream out(path, std::ios::binary);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out.flush()) return absl::InternalError(fmt::format("cannot write {}", path));
  return absl::OkStatus();
}

constexpr std::string_view kCompileFolderPrefix = "sparseditto-nvcc-";  // one of OwnedTempPrefixes()

// A compile's own folder: <temp dir>/sparseditto-nvcc-<pid>-XXXXXX (common/owned_temp_folders.h: the
// pid lets a later start sweep the folders of a process killed with -9), ours, holding work/ (nvcc's
// working folder, with abi/ and tmp/), which the sandbox's uid is given. The outer folder stays ours so
// the sweep, which takes only this user's folders, still finds it.
absl::StatusOr<std::string> MakeCompileFolder() {
  SD_ASSIGN_OR_RETURN(const fs::path folder, MakeOwnedTempFolder(fs::temp_directory_path(), kCompileFolderPrefix));
  std::error_code error;
  fs::permissions(folder, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec, error);
  fs::create_directories(folder / "work" / "tmp", error);
  if (!error) fs::create_directory(folder / "work" / "abi", error);
  if (error) return absl::InternalError(fmt::format("mkdir in {}: {}", folder.string(), error.message()));
  return folder.string();
}

// Removes a scratch folder when the compile is over, whatever happened.
struct ScratchFolder {
  std::string path;
  ~ScratchFolder() {
    std::error_code ignored;
    if (!path.empty()) fs::remove_all(path, ignored);
  }
};

}  // namespace

SandboxPolicy DefaultNvccSandbox() {
  SandboxPolicy policy;
  policy.landlock = ToolchainLandlockRules("");
  policy.require_all_layers = !MissingLayersAllowed();  // issue 23 item 6: refuse unless opted out
  return policy;
}

absl::StatusOr<std::vector<std::string>> GencodeFlags(std::string_view arch) {
  std::string_view digits = arch.substr(std::min<size_t>(3, arch.size()));
  std::string_view suffix;
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) {
    suffix = digits.substr(digits.size() - 1);
    digits.remove_suffix(1);
  }
  const bool numeric = !digits.empty() && digits.size() <= 3 &&
                       std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  if (!arch.starts_with("sm_") || !numeric) {
    return absl::InvalidArgumentError(fmt::format("bad arch '{}': expected sm_<number>[a|f], e.g. sm_90a", arch));
  }
  return std::vector<std::string>{"-gencode", fmt::format("arch=compute_{0}{1},code=sm_{0}{1}", digits, suffix)};
}

absl::StatusOr<std::vector<std::string>> NvccFlags(const CompileOptions& options) {
  if (options.archs.empty()) return absl::InvalidArgumentError("no arch to compile for");
  std::vector<std::string> flags = {"-std=c++17", "-O3",     "-shared",  "-Xcompiler", "-fPIC",
                                    "-Xcompiler", "-fvisibility=hidden", "-Xptxas", "-v", "-lineinfo",
                                    "-I" + options.abi_include_dir};
  for (const std::string& arch : options.archs) {
    SD_ASSIGN_OR_RETURN(const std::vector<std::string> gencode, GencodeFlags(arch));
    flags.insert(flags.end(), gencode.begin(), gencode.end());
  }
  flags.insert(flags.end(), options.extra_flags.begin(), options.extra_flags.end());
  return flags;
}

absl::StatusOr<std::unique_ptr<NvccCompiler>> NvccCompiler::Create(const Config& given) {
  if (!fs::exists(given.nvcc)) return absl::NotFoundError(fmt::format("nvcc not found at {}", given.nvcc));
  Config config = given;  // compiles run in scratch folders: make the path absolute
  config.nvcc = fs::absolute(given.nvcc).string();
  std::string identity;
  const std::string path = fs::path(config.nvcc).parent_path().string() + ":/usr/local/bin:/usr/bin:/bin";
  const std::vector<std::vector<std::string>> probes = {{config.nvcc, "--version"}, {"g++", "--version"}};
  for (const std::vector<std::string>& argv : probes) {
    SpawnOptions options;
    options.argv = argv;
    options.environment["PATH"] = path;
    options.merge_stderr_into_stdout = true;
    absl::StatusOr<CommandResult> run = RunCommand(options, 60);
    if (!run.ok() || !run->outcome.success()) {
      return absl::FailedPreconditionError(fmt::format(
          "`{} --version` failed: {}", argv[0], run.ok() ? run->outcome.ToString() : run.status().ToString()));
    }
    identity += run->stdout_output.bytes;
  }
  (void)SweepOrphanedTempFolders(fs::temp_directory_path(), {kCompileFolderPrefix});
  SD_ASSIGN_OR_RETURN(CompileCache cache, CompileCache::Open(config.cache_directory));
  if (config.max_cache_bytes > 0) (void)cache.Trim(config.max_cache_bytes, kCacheMinAge);
  return std::unique_ptr<NvccCompiler>(new NvccCompiler(config, std::move(identity), std::move(cache)));
}

std::string NvccCompiler::NvccPath() const {
  return fs::path(config_.nvcc).parent_path().string() + ":/usr/local/bin:/usr/bin:/bin";
}

absl::StatusOr<CompileResult> NvccCompiler::Compile(std::string_view source, const CompileOptions& given) const {
  if (given.abi_include_dir.empty()) return absl::InvalidArgumentError("CompileOptions.abi_include_dir is required");
  CompileOptions options = given;  // nvcc runs in a scratch folder: the include path must be absolute
  options.abi_include_dir = fs::absolute(given.abi_include_dir).lexically_normal().string();
  if (!(options.timeout_seconds > 0)) return absl::InvalidArgumentError("CompileOptions.timeout_seconds must be > 0");
  SD_ASSIGN_OR_RETURN(const std::vector<std::string> flags, NvccFlags(options));
  SD_ASSIGN_OR_RETURN(const std::string abi_header, ReadWholeFile(options.abi_include_dir + "/sparseditto_kernel.h"));
  std::vector<std::string> key_flags = flags;
  for (std::string& flag : key_flags) {
    if (flag == "-I" + options.abi_include_dir) flag = std::string("-I") + kAbiDirPlaceholder;
  }
  key_flags.insert(key_flags.end(), kCandidateLibraries.begin(), kCandidateLibraries.end());
  const std::string key = CompileCacheKey(source, key_flags, toolchain_identity_, abi_header);

  // One compile per key at a time in this process: a twin waits, then finds the cache entry.
  {
    absl::MutexLock lock(&in_flight_mutex_);
    const auto key_is_free = [this, &key]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(in_flight_mutex_) {
      return std::find(in_flight_keys_.begin(), in_flight_keys_.end(), key) == in_flight_keys_.end();
    };
    in_flight_mutex_.Await(absl::Condition(&key_is_free));
    in_flight_keys_.push_back(key);
  }
  std::optional<CompileResult> hit = options.use_cache ? cache_.Lookup(key) : std::nullopt;
  absl::StatusOr<CompileResult> result = hit ? std::move(*hit) : CompileUncached(source, flags, options, key, abi_header);
  {
    absl::MutexLock lock(&in_flight_mutex_);
    in_flight_keys_.erase(std::find(in_flight_keys_.begin(), in_flight_keys_.end(), key));
  }
  return result;
}

absl::StatusOr<CompileResult> NvccCompiler::CompileUncached(std::string_view source,
                                                            const std::vector<std::string>& flags,
                                                            const CompileOptions& options, const std::string& key,
                                                            std::string_view abi_header) const {
  ScratchFolder scratch;  // in the cache: the built library is copied here and Store renames it in
  SD_ASSIGN_OR_RETURN(scratch.path, cache_.MakeScratchDirectory());
  const std::string library_path = scratch.path + "/candidate.so";
  // Relative paths, run in the compile's folder: the log then says "candidate.cu(3): error", the same
  // for every compile, and shows no folder of ours to the mutators.
  std::vector<std::string> tail = {"-o", "candidate.so", "candidate.cu"};
  // Libraries a candidate may call, after the source so the linker keeps them: cuBLAS (the dense
  // fallback seed). The runner has it loaded already, so this costs nothing at load time.
  tail.insert(tail.end(), kCandidateLibraries.begin(), kCandidateLibraries.end());
  const auto copy_out = [&library_path](const std::string& work, const CommandResult& run) -> absl::Status {
    if (!run.outcome.success()) return absl::OkStatus();
    std::error_code error;
    fs::copy_file(work + "/candidate.so", library_path, error);
    if (error) return absl::InternalError(fmt::format("copying the built library out of {}: {}", work, error.message()));
    return absl::OkStatus();
  };
  absl::StatusOr<CommandResult> run = RunNvcc(source, abi_header, flags, tail, options, copy_out);
  if (!run.ok()) return run.status();

  CompileResult result;
  result.cache_key = key;
  result.seconds = run->seconds;
  std::string log = run->stdout_output.bytes;
  if (run->stdout_output.truncated) {
    log += fmt::format("\n[sparseditto] {} more bytes of compiler output were discarded\n",
                       run->stdout_output.discarded_bytes);
  }
  if (run->sandbox_skipped != 0) {
    log += fmt::format("\n[sparseditto] nvcc ran without these sandbox layers (not available here): {}\n",
                       SandboxLayerNames(run->sandbox_skipped));
  }
  result.resources = ParsePtxasResources(log);
  bool cacheable = true;
  if (run->outcome.kind == ExitOutcome::Kind::kTimedOut) {
    result.timed_out = true;
    result.failure = fmt::format("nvcc timed out after {:g} s", options.timeout_seconds);
    log += fmt::format("\n[sparseditto] {}; nvcc and its children were killed\n", result.failure);
    cacheable = false;  // a busy machine may be the cause
  } else if (!run->outcome.success()) {
    result.failure = fmt::format("nvcc {}", run->outcome.ToString());
    cacheable = run->outcome.kind == ExitOutcome::Kind::kExited;  // a signal (OOM kill, SIGXFSZ) may not repeat
  } else {
    absl::StatusOr<std::vector<ExportedSymbol>> exports = ReadExportedSymbols(library_path);
    std::vector<std::string> problems = exports.ok() ? CandidateExportProblems(*exports)
                                                     : std::vector<std::string>{exports.status().ToString()};
    result.ok = problems.empty();
    for (const std::string& problem : problems) {
      if (!result.failure.empty()) result.failure += "; ";
      result.failure += problem;
    }
  }
  result.log = TrimLog(log, kMaxLogBytes);
  if (cacheable) {
    SD_RETURN_IF_ERROR(cache_.Store(key, result, library_path));
  } else if (result.ok) {
    return absl::InternalError("unreachable: an ok result is always cacheable");
  }
  if (result.ok) result.library_path = cache_.LibraryPath(key);
  return result;
}

absl::StatusOr<CommandResult> NvccCompiler::RunNvcc(
    std::string_view source, std::string_view abi_header, const std::vector<std::string>& flags,
    const std::vector<std::string>& tail, const CompileOptions& options,
    const std::function<absl::Status(const std::string& work, const CommandResult& run)>& collect) const {
  ScratchFolder folder;  // removed at the end; work/ inside is the only folder the sandbox lets nvcc write
  SD_ASSIGN_OR_RETURN(folder.path, MakeCompileFolder());
  const std::string work = folder.path + "/work";
  SD_RETURN_IF_ERROR(WriteWholeFile(work + "/candidate.cu", source));
  SD_RETURN_IF_ERROR(WriteWholeFile(work + "/abi/sparseditto_kernel.h", abi_header));

  SpawnOptions spawn;
  spawn.argv = {config_.nvcc};
  for (const std::string& flag : flags) {
    spawn.argv.push_back(flag == "-I" + options.abi_include_dir ? std::string("-Iabi") : flag);
  }
  spawn.argv.insert(spawn.argv.end(), tail.begin(), tail.end());
  spawn.environment = {{"PATH", NvccPath()}, {"TMPDIR", work + "/tmp"}, {"HOME", work}};
  spawn.working_directory = work;
  spawn.merge_stderr_into_stdout = true;
  spawn.max_captured_bytes = kMaxCapturedBytes;
  spawn.limits.file_size_bytes = options.max_output_bytes;
  spawn.limits.address_space_bytes = options.max_address_space_bytes;
  spawn.limits.cpu_seconds = static_cast<int64_t>(std::ceil(options.timeout_seconds)) * 2 + 10;  // a backstop
  spawn.limits.nice_increment = std::max(0, options.nice_increment);
  if (config_.sandbox) {
    spawn.sandbox = *config_.sandbox;
    if (spawn.sandbox->landlock) {
      std::error_code ignored;  // the toolkit (<toolkit>/bin/nvcc) where it is outside the toolchain rules
      const fs::path toolkit = fs::canonical(config_.nvcc, ignored).parent_path().parent_path();
      if (!toolkit.empty()) spawn.sandbox->landlock->executable.push_back(toolkit.string());
      spawn.sandbox->landlock->read_write.push_back(work);
    }
    SD_RETURN_IF_ERROR(PrepareWritableFolder(work, *spawn.sandbox));
  }
  absl::StatusOr<CommandResult> run = RunCommand(spawn, options.timeout_seconds);
  if (absl::IsFailedPrecondition(run.status()) && absl::StrContains(run.status().message(), "sandbox")) {
    return run.status();  // a sandbox layer required and not available here
  }
  if (!run.ok()) return absl::InternalError(fmt::format("could not run nvcc: {}", run.status().ToString()));
  SD_RETURN_IF_ERROR(collect(work, *run));
  return run;
}

}  // namespace sparseditto
