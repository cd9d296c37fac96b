// CPU checks of the adversarial corpus (tests/adversarial/corpus.json, see README.md there):
//  - the corpus is complete (at least 14 entries, every failure category the evaluator can give before
//    or while running a candidate) and consistent with the files beside it;
//  - every entry compiles with nvcc (the project's flags, sm_90) exactly when it says it does, fails for
//    the reason it names, and the compile bomb is still running after 20 s, is killed by
//    `timeout -s KILL` and leaves no nvcc child (cudafe++, cicc, ptxas) behind.
// Whether the evaluator gives each entry its expected category is checked on a GPU elsewhere.
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <dlfcn.h>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"
#include "kernels/testing/candidate_build.h"
#include "nlohmann/json.hpp"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kCorpusDir[] = SPARSEDITTO_SOURCE_DIR "/tests/adversarial";
constexpr char kCorpusPath[] = SPARSEDITTO_SOURCE_DIR "/tests/adversarial/corpus.json";
constexpr int kBombSeconds = 20;
// SLOWER: a timing cheat the harness defuses by timing it honestly (the cheat then loses to the baselines).
const std::set<std::string> kCategories = {"REJECTED", "COMPILE", "WRONG", "CRASH", "TIMEOUT", "SLOWER"};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Entry {
  std::string file;
  std::string expected;
  bool compiles = false;
  bool compile_timeout = false;
  std::string compile_error;
};

// Test names and failure messages show the file, not the bytes of the struct.
void PrintTo(const Entry& entry, std::ostream* os) { *os << entry.file; }

// The entries for the parameterised compile test; empty when the corpus does not parse (the
// completeness test then says why).
std::vector<Entry> LoadEntries() {
  std::vector<Entry> entries;
  try {
    const json corpus = json::parse(ReadFile(kCorpusPath));
    for (const json& e : corpus.at("entries")) {
      Entry entry;
      entry.file = e.at("file").get<std::string>();
      entry.expected = e.at("expected").get<std::string>();
      entry.compiles = e.at("compiles").get<bool>();
      entry.compile_timeout = e.value("compile_timeout", false);
      entry.compile_error = e.value("compile_error", std::string());
      entries.push_back(entry);
    }
  } catch (const std::exception&) {
    return {};
  }
  return entries;
}

TEST(AdversarialCorpusTest, IsCompleteAndConsistentWithItsFiles) {
  json corpus;
  ASSERT_NO_THROW(corpus = json::parse(ReadFile(kCorpusPath))) << kCorpusPath;
  ASSERT_TRUE(corpus.contains("entries") && corpus["entries"].is_array());
  const json& entries = corpus["entries"];
  EXPECT_GE(entries.size(), 14u);

  std::set<std::string> files, categories;
  for (const json& e : entries) {
    ASSERT_TRUE(e.is_object()) << e.dump();
    ASSERT_TRUE(e.contains("file") && e["file"].is_string()) << e.dump();
    const std::string file = e["file"].get<std::string>();
    SCOPED_TRACE(file);
    EXPECT_TRUE(files.insert(file).second) << "listed twice";

    ASSERT_TRUE(e.contains("expected") && e["expected"].is_string());
    const std::string expected = e["expected"].get<std::string>();
    EXPECT_TRUE(kCategories.count(expected)) << "unknown category " << expected;
    categories.insert(expected);
    for (const json& also : e.value("also_acceptable", json::array())) {
      EXPECT_TRUE(also.is_string() && kCategories.count(also.get<std::string>()) && also != expected) << also;
    }
    for (const char* field : {"cheat", "caught_by"}) {
      EXPECT_TRUE(e.contains(field) && e[field].is_string() && !e[field].get<std::string>().empty()) << field;
    }
    ASSERT_TRUE(e.contains("compiles") && e["compiles"].is_boolean());
    const bool compiles = e["compiles"].get<bool>();
    const bool timeout = e.value("compile_timeout", false);
    const std::string compile_error = e.value("compile_error", std::string());
    if (expected == "COMPILE") {
      EXPECT_FALSE(compiles) << "a COMPILE case must not compile";
    }
    if (!compiles) {
      EXPECT_NE(timeout, !compile_error.empty()) << "a failing compile names either compile_timeout or compile_error";
    } else {
      EXPECT_FALSE(timeout);
      EXPECT_TRUE(compile_error.empty());
    }

    // The file is a candidate under the ABI whose header says what it does and what must catch it.
    const fs::path path = fs::path(kCorpusDir) / file;
    ASSERT_TRUE(fs::exists(path)) << path;
    const std::string source = ReadFile(path);
    EXPECT_NE(source.find("// ADVERSARIAL CANDIDATE " + file), std::string::npos);
    EXPECT_NE(source.find("// Expected: " + expected), std::string::npos);
    EXPECT_NE(source.find("CHEAT"), std::string::npos) << "the cheat is marked in the code";
    EXPECT_NE(source.find("#include \"sparseditto_kernel.h\""), std::string::npos);
    for (const char* function : {"sparseditto_prepare(", "sparseditto_run(", "sparseditto_release("}) {
      EXPECT_NE(source.find(function), std::string::npos) << function;
    }
  }
  for (const std::string& category : kCategories) EXPECT_TRUE(categories.count(category)) << "no " << category << " case";

  // Every candidate source in the folder is in the corpus.
  for (const auto& item : fs::directory_iterator(kCorpusDir)) {
    if (item.path().extension() == ".cu") {
      EXPECT_TRUE(files.count(item.path().filename().string())) << item.path() << " is not in corpus.json";
    }
  }
}

// Command lines (/proc/PID/cmdline) of live processes that mention `needle`.
std::vector<std::pair<pid_t, std::string>> ProcessesMentioning(const std::string& needle) {
  std::vector<std::pair<pid_t, std::string>> found;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator("/proc", ec)) {
    const std::string name = item.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid == getpid()) continue;
    std::string cmdline = ReadFile(item.path() / "cmdline");  // empty for zombies
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    if (cmdline.find(needle) != std::string::npos) found.emplace_back(pid, cmdline);
  }
  return found;
}

struct TimedCompile {
  bool killed = false;
  int status = 0;
  double seconds = 0;
  std::string log;
};

// nvcc with the candidate flags under `timeout -s KILL`: timeout runs in a process group of its own
// and kills the whole group (nvcc and everything it started) when the time is up. TMPDIR puts nvcc's
// intermediate files, and so its children's command lines, under `dir`.
TimedCompile CompileUnderKillTimeout(const fs::path& source, const fs::path& dir, int seconds) {
  const fs::path tmp = dir / "nvcc_tmp";
  fs::create_directories(tmp);
  const std::string command = fmt::format(
      "TMPDIR='{}' timeout -s KILL {} '{}' -std=c++17 -O3 -Xptxas -v -shared -Xcompiler -fPIC -I'{}' "
      "-gencode arch=compute_90,code=sm_90 -o '{}' '{}' 2>&1",
      tmp.string(), seconds, SPARSEDITTO_NVCC, SPARSEDITTO_SOURCE_DIR "/kernel_abi", (dir / "candidate.so").string(),
      source.string());
  TimedCompile result;
  const auto start = std::chrono::steady_clock::now();
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer;
  size_t got;
  while ((got = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.log.append(buffer.data(), got);
  result.status = pclose(pipe);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // timeout kills its whole process group, itself included: the shell reports that as 128 + 9 (or passes
  // the signal on when it exec'd timeout). A timeout that outlives its group exits with 124.
  result.killed = (WIFSIGNALED(result.status) && WTERMSIG(result.status) == SIGKILL) ||
                  (WIFEXITED(result.status) &&
                   (WEXITSTATUS(result.status) == 128 + SIGKILL || WEXITSTATUS(result.status) == 124));
  return result;
}

class AdversarialCompileTest : public ::testing::TestWithParam<Entry> {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::sparseditto::testing_support::ProcessTempDir()) /
           fmt::format("sd_adversarial_{}_{}", getpid(), fs::path(GetParam().file).stem().string());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_P(AdversarialCompileTest, CompilesExactlyWhenTheCorpusSays) {
  const Entry& entry = GetParam();
  const fs::path source = fs::path(kCorpusDir) / entry.file;

  if (entry.compile_timeout) {
    // Compile a copy inside dir_ so every process of this compile names dir_ on its command line.
    const fs::path copy = dir_ / entry.file;
    fs::copy_file(source, copy);
    const TimedCompile result = CompileUnderKillTimeout(copy, dir_, kBombSeconds);
    EXPECT_TRUE(result.killed) << "nvcc ended by itself (status " << result.status << ") after " << result.seconds
                               << " s:\n" << result.log;
    EXPECT_GE(result.seconds, kBombSeconds - 1);
    EXPECT_FALSE(fs::exists(dir_ / "candidate.so"));

    // Nothing of that compile may survive (killed children are reaped by init; zombies have no cmdline).
    auto left = ProcessesMentioning(dir_.string());
    for (int i = 0; i < 100 && !left.empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      left = ProcessesMentioning(dir_.string());
    }
    for (const auto& [pid, cmdline] : left) {
      ADD_FAILURE() << "process " << pid << " outlived the compile limit: " << cmdline;
      kill(pid, SIGKILL);  // a process this test started, by its id
    }
    return;
  }

  const std::string library = (dir_ / "candidate.so").string();
  const auto log = testing::CompileCandidate(SPARSEDITTO_NVCC, source.string(), {"sm_90"}, library);
  if (entry.compiles) {
    ASSERT_TRUE(log.ok()) << log.status();
    // It looks like a working candidate: the ABI's entry points are there.
    auto lib = testing::LoadCandidate(library);
    ASSERT_TRUE(lib.ok()) << lib.status();
    EXPECT_EQ(lib->abi_version(), SPARSEDITTO_ABI_VERSION);
    dlclose(lib->handle);
  } else {
    ASSERT_FALSE(log.ok()) << "compiled, but the corpus says it does not:\n" << *log;
    EXPECT_NE(log.status().message().find(entry.compile_error), std::string::npos)
        << "expected \"" << entry.compile_error << "\" in:\n" << log.status().message();
  }
}

std::string EntryName(const ::testing::TestParamInfo<Entry>& info) {
  std::string name = fs::path(info.param.file).stem().string();
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, AdversarialCompileTest, ::testing::ValuesIn(LoadEntries()), EntryName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AdversarialCompileTest);

}  // namespace
}  // namespace sparseditto
