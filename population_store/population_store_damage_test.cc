// Damage that RocksDB would open silently (a write-ahead log damaged, truncated or removed; the store's
// files removed) and errors that must name their real cause (permissions), against a real RocksDB in a
// temporary folder.
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "common/status_format.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "population_store/population_store.h"
#include "population_store/rocksdb_status.h"
#include "population_store/store_test_util.h"
#include "population_store/write_ledger.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using namespace store_testing;

constexpr int kCandidates = 6;

// A store holding a run, a task and kCandidates candidates, one write each; closed, so the candidates
// live only in the write-ahead log (RocksDB does not flush on close).
void MakeStoreWithCandidates(const std::string& path) {
  auto store = PopulationStore::Create(path);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->CreateRun(SampleRun("r")).ok());
  ASSERT_TRUE((*store)->PutTask("r", SampleTask("t")).ok());
  for (int i = 0; i < kCandidates; ++i) {
    const absl::Status put = (*store)->PutCandidate("r", SampleCandidate("c" + std::to_string(i), "t"));
    ASSERT_TRUE(put.ok()) << put;
  }
}

std::vector<std::string> FilesEndingWith(const std::string& dir, std::string_view suffix) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      files.push_back(entry.path().string());
    }
  }
  return files;
}

// The write-ahead log holding the candidates: the largest *.log file.
std::string WriteAheadLog(const std::string& dir) {
  std::string largest;
  for (const std::string& f : FilesEndingWith(dir, ".log")) {
    if (fs::path(f).filename() == "LOG") continue;
    if (largest.empty() || fs::file_size(f) > fs::file_size(largest)) largest = f;
  }
  return largest;
}

void OverwriteAt(const std::string& path, uint64_t offset, const std::string& bytes) {
  std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
  file.seekp(static_cast<std::streamoff>(offset));
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

struct DamageCase {
  std::string name;
  std::function<void(const std::string& store)> damage;
  std::string words;  // in the error of every open
};

TEST(PopulationStoreDamage, AcknowledgedWritesLostFromTheLogAreReportedNeverDropped) {
  const DamageCase cases[] = {
      {"bytes overwritten in the middle of the log",
       [](const std::string& p) {
         const std::string log = WriteAheadLog(p);
         OverwriteAt(log, fs::file_size(log) / 2, std::string(64, '\x5a'));
       },
       "lost acknowledged writes"},
      {"log truncated to half",
       [](const std::string& p) {
         const std::string log = WriteAheadLog(p);
         fs::resize_file(log, fs::file_size(log) / 2);
       },
       "lost acknowledged writes"},
      {"log truncated by its last bytes",
       [](const std::string& p) {
         const std::string log = WriteAheadLog(p);
         fs::resize_file(log, fs::file_size(log) - 10);
       },
       "lost acknowledged writes"},
      {"log removed", [](const std::string& p) { fs::remove(WriteAheadLog(p)); }, "lost acknowledged writes"},
      {"ledger damaged",
       [](const std::string& p) {
         std::ofstream(fs::path(p) / WriteLedger::kFileName, std::ios::trunc) << "garbage";
       },
       "is damaged"},
  };
  for (const DamageCase& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    ASSERT_TRUE(dir.ok());
    const std::string path = dir.Sub("store");
    MakeStoreWithCandidates(path);
    ASSERT_FALSE(WriteAheadLog(path).empty());
    c.damage(path);
    // Twice each: a first open that failed must not have made the store look whole to the next one.
    for (int round = 0; round < 2; ++round) {
      for (bool read_only : {true, false}) {
        SCOPED_TRACE(read_only ? "read-only" : "for writing");
        PopulationStoreOptions options;
        options.read_only = read_only;
        options.create_if_missing = !read_only;
        auto store = PopulationStore::Open(path, options);
        ASSERT_FALSE(store.ok()) << "opened: the lost candidates would be dropped silently";
        EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
        EXPECT_THAT(std::string(store.status().message()), HasSubstr(c.words));
        EXPECT_THAT(std::string(store.status().message()), HasSubstr(path));
      }
    }
  }
}

TEST(PopulationStoreDamage, AnUndamagedStoreKeepsEveryWriteAcrossReopens) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.Sub("store");
  MakeStoreWithCandidates(path);
  for (int round = 0; round < 3; ++round) {
    auto store = PopulationStore::Open(path, {});
    ASSERT_TRUE(store.ok()) << store.status();
    auto candidates = (*store)->ListCandidates("r", "t");
    ASSERT_TRUE(candidates.ok()) << candidates.status();
    EXPECT_EQ(static_cast<int>(candidates->size()), kCandidates + round);
    ASSERT_TRUE((*store)->PutCandidate("r", SampleCandidate("more" + std::to_string(round), "t")).ok());
  }
  auto reader = PopulationStore::OpenReadOnly(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
}

TEST(PopulationStoreDamage, AStoreWithoutLedgerOpensAndGetsOne) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.Sub("store");
  MakeStoreWithCandidates(path);
  fs::remove(fs::path(path) / WriteLedger::kFileName);  // as a store made before the ledger
  ASSERT_TRUE(PopulationStore::OpenReadOnly(path).ok());
  ASSERT_TRUE(PopulationStore::Open(path, {}).ok());
  EXPECT_TRUE(fs::exists(fs::path(path) / WriteLedger::kFileName));
}

TEST(PopulationStoreDamage, AnEmptiedStoreFolderIsNotRecreated) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.Sub("store");
  MakeStoreWithCandidates(path);
  for (const auto& entry : fs::directory_iterator(path)) fs::remove_all(entry.path());
  PopulationStoreOptions resume;
  resume.create_if_missing = true;  // what `search` opens its run's store with
  auto store = PopulationStore::Open(path, resume);
  ASSERT_FALSE(store.ok()) << "a new store replaced the emptied one";
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition) << store.status();
  EXPECT_THAT(std::string(store.status().message()), HasSubstr("is an empty folder where a population store"));
  EXPECT_TRUE(fs::is_empty(path)) << "nothing was made there";
  EXPECT_TRUE(PopulationStore::Create(path).ok()) << "asking for a new store explicitly still works";
}

TEST(PopulationStoreDamage, RocksDbPermissionErrorsAreNotCalledSomethingElse) {
  using C = absl::StatusCode;
  const struct {
    rocksdb::Status status;
    C code;
    std::string words;
  } cases[] = {
      {rocksdb::Status::IOError("While lock file: /s/LOCK", "Permission denied"), C::kPermissionDenied,
       "permission denied"},
      {rocksdb::Status::IOError("While open a file for appending: /s/000009.log", "Permission denied"),
       C::kPermissionDenied, "permission denied"},
      {rocksdb::Status::IOError("While lock file: /s/LOCK", "Resource temporarily unavailable"), C::kUnavailable,
       "open for writing elsewhere"},
      {rocksdb::Status::IOError("lock hold by current process, acquire time 1 acquiring thread 2: /s/LOCK",
                                "No locks available"),
       C::kUnavailable, "open for writing elsewhere"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.status.ToString());
    const absl::Status s = FromRocksDb(c.status, "cannot open the store at /s");
    EXPECT_EQ(s.code(), c.code) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.words));
  }
}

// Runs `body` in a child process (as nobody when `drop_root` and this process is root, so that
// permissions apply); returns the child's exit code, -1 when it died.
int InChild(const std::function<int()>& body, bool drop_root) {
  const pid_t child = fork();
  if (child == 0) {
    if (drop_root && geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(100);
    _exit(body());
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(PopulationStoreDamage, PermissionDeniedIsSaidAsSuch) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.Sub("store");
  // Made in a child: this process starts no RocksDB threads before it forks.
  ASSERT_EQ(InChild([&] { return static_cast<int>(PopulationStore::Create(path).status().code()); }, false), 0);
  const bool root = geteuid() == 0;  // root reads anything: the opens below run as nobody then
  const fs::perms closed = root ? fs::perms::owner_all : fs::perms::none;
  const fs::perms open = fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec;
  const fs::perms unreadable = root ? fs::perms::owner_read | fs::perms::owner_write : fs::perms::none;
  struct Case {
    std::string name;
    fs::perms folders;  // of the temporary folder and the store's folder
    fs::perms files;    // of the store's files
    bool read_only;
  };
  const Case cases[] = {
      {"the folder cannot be entered", closed, fs::perms::owner_read | fs::perms::owner_write, false},
      {"the folder cannot be entered, read-only", closed, fs::perms::owner_read | fs::perms::owner_write, true},
      {"the store's files cannot be read", open, unreadable, false},
      {"the store's files cannot be read, read-only", open, unreadable, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    fs::permissions(dir.path(), fs::perms::owner_all);
    fs::permissions(path, fs::perms::owner_all);
    for (const auto& entry : fs::directory_iterator(path)) fs::permissions(entry.path(), c.files);
    fs::permissions(path, c.folders);
    fs::permissions(dir.path(), c.folders);
    const int code = InChild(
        [&] {
          PopulationStoreOptions options;
          options.read_only = c.read_only;
          const absl::Status opened = PopulationStore::Open(path, options).status();
          if (!opened.ok() && std::string(opened.message()).find("permission denied") == std::string::npos) {
            return static_cast<int>(absl::StatusCode::kUnknown);  // the words must say it, not only the code
          }
          return static_cast<int>(opened.code());
        },
        /*drop_root=*/true);
    EXPECT_EQ(code, static_cast<int>(absl::StatusCode::kPermissionDenied));
  }
  fs::permissions(dir.path(), fs::perms::owner_all);
  fs::permissions(path, fs::perms::owner_all);
  for (const auto& entry : fs::directory_iterator(path)) fs::permissions(entry.path(), fs::perms::owner_all);
}

// A creator killed between mkdtemp and its rename leaves <store>.creating-<pid>-XXXXXX beside the store;
// the next creation there sweeps it once its process is gone (common/owned_temp_folders.h).
TEST(PopulationStoreDamage, AKilledCreatorsTemporaryFolderIsSweptByTheNextCreation) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  const std::string dead = dir.Sub(fmt::format("store.creating-{}-AbCdEf", child));
  const std::string live = dir.Sub(fmt::format("store.creating-{}-GhIjKl", getpid()));
  fs::create_directories(dead + "/half");
  fs::create_directories(live);
  ASSERT_TRUE(PopulationStore::Create(dir.Sub("store")).ok());
  EXPECT_FALSE(fs::exists(dead)) << "its creator is gone";
  EXPECT_TRUE(fs::exists(live)) << "its creator (this process) still runs";
}

}  // namespace
}  // namespace sparseditto
