// Every logical write is one batch: a failure injected before it, or halfway through its bytes reaching
// the write-ahead log, leaves nothing of it visible, in this process or after reopening.
#include <atomic>
#include <functional>
#include <map>
#include <set>

#include "common/status_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "population_store/population_store.h"
#include "population_store/store_test_util.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/file_system.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;
using namespace store_testing;

// Every key and value of every column family, as a read-only open sees them now.
using Dump = std::map<std::string, std::map<std::string, std::string>>;
Dump DumpStore(const std::string& path) {
  Dump dump;
  rocksdb::Options options;
  std::vector<std::string> names;
  EXPECT_TRUE(rocksdb::DB::ListColumnFamilies(options, path, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const std::string& name : names) descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  const rocksdb::Status opened = rocksdb::DB::OpenForReadOnly(options, path, descriptors, &handles, &db);
  EXPECT_TRUE(opened.ok()) << opened.ToString();
  if (!opened.ok()) return dump;
  for (size_t i = 0; i < names.size(); ++i) {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), handles[i]));
    for (it->SeekToFirst(); it->Valid(); it->Next())
      dump[names[i]][it->key().ToString()] = it->value().ToString();
    db->DestroyColumnFamilyHandle(handles[i]).PermitUncheckedError();
  }
  delete db;
  return dump;
}

// The column families whose contents differ between two dumps.
std::set<std::string> Changed(const Dump& before, const Dump& after) {
  std::set<std::string> changed;
  for (const auto& [name, records] : after) {
    const auto old = before.find(name);
    if (old == before.end() || old->second != records) changed.insert(name);
  }
  return changed;
}

constexpr std::string_view kRun = "r";
constexpr std::string_view kTask = "t";

// A store holding a run, a task, and candidate c1 evaluated once.
absl::Status Populate(PopulationStore& store) {
  if (auto s = store.CreateRun(SampleRun(kRun)); !s.ok()) return s;
  if (auto s = store.PutTask(kRun, SampleTask(kTask)); !s.ok()) return s;
  if (auto s = store.PutCandidate(kRun, SampleCandidate("c1", kTask)); !s.ok()) return s;
  return store.CommitEvaluation(kRun, SampleEvaluation("c1", kTask, 1.0),
                                SampleRunState(kTask, 1, "c1"));
}

struct WriteCase {
  std::string operation;  // what the hook is told
  std::function<absl::Status(PopulationStore&)> write;
  std::set<std::string> changes;  // the column families a successful write changes
};

std::vector<WriteCase> WriteCases() {
  return {
      {"CommitEvaluation",
       [](PopulationStore& s) {
         return s.CommitEvaluation(kRun, SampleEvaluation("c1", kTask, 2.0),
                                   SampleRunState(kTask, 2, "c1"));
       },
       {"evaluations", "run_states"}},
      {"CommitCandidates",
       [](PopulationStore& s) {
         // A crossover of c1 and a sibling stored in the same commit, with the state naming one in flight.
         return s.CommitCandidates(
             kRun, {SampleCandidate("c2", kTask, {"c1"}), SampleCandidate("c3", kTask, {"c1", "c2"})},
             SampleRunState(kTask, 7, "c3"));
       },
       {"candidates", "creation_order", "source_hashes", "lineage", "meta", "run_states"}},
      {"CommitCandidates",
       [](PopulationStore& s) { return s.PutCandidate(kRun, SampleCandidate("c2", kTask, {"c1"})); },
       {"candidates", "creation_order", "source_hashes", "lineage", "meta"}},
      {"PutRunState",
       [](PopulationStore& s) { return s.PutRunState(kRun, SampleRunState(kTask, 9)); },
       {"run_states"}},
      {"PutTask", [](PopulationStore& s) { return s.PutTask(kRun, SampleTask("t2")); }, {"tasks"}},
      {"CreateRun", [](PopulationStore& s) { return s.CreateRun(SampleRun("r2")); }, {"runs"}},
  };
}

TEST(PopulationStoreAtomicity, AWriteRefusedAtTheBatchChangesNothingAndOneWriteIsOneBatch) {
  for (const WriteCase& c : WriteCases()) {
    SCOPED_TRACE(c.operation + " changing " + std::to_string(c.changes.size()) + " column families");
    TempDir dir;
    ASSERT_TRUE(dir.ok());
    std::vector<std::string> calls;
    bool fail = false;
    PopulationStoreOptions options;
    options.create_if_missing = true;
    options.before_write = [&](std::string_view operation) {
      calls.emplace_back(operation);
      return fail ? absl::UnavailableError("injected: the batch is refused") : absl::OkStatus();
    };
    auto store = PopulationStore::Open(dir.Sub("store"), options);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE(Populate(**store).ok());
    const Dump before = DumpStore(dir.Sub("store"));

    calls.clear();
    fail = true;
    const absl::Status refused = c.write(**store);
    EXPECT_EQ(refused.code(), absl::StatusCode::kUnavailable) << refused;
    EXPECT_EQ(calls, std::vector<std::string>{c.operation});
    EXPECT_EQ(DumpStore(dir.Sub("store")), before);

    calls.clear();
    fail = false;
    const absl::Status written = c.write(**store);
    ASSERT_TRUE(written.ok()) << written;
    EXPECT_EQ(calls, std::vector<std::string>{c.operation}) << "one logical write, one batch";
    EXPECT_EQ(Changed(before, DumpStore(dir.Sub("store"))), c.changes);
  }
}

// Passes the first half of a write-ahead-log append through to the disk and then fails it, once armed:
// a disk that fails in the middle of a record.
class TornWalFileSystem : public rocksdb::FileSystemWrapper {
 public:
  explicit TornWalFileSystem(std::shared_ptr<rocksdb::FileSystem> target) : FileSystemWrapper(target) {}
  const char* Name() const override { return "TornWalFileSystem"; }

  rocksdb::IOStatus NewWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* file,
                                    rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus status = target()->NewWritableFile(name, options, file, dbg);
    if (status.ok() && name.ends_with(".log")) *file = std::make_unique<TornFile>(std::move(*file), this);
    return status;
  }

  std::atomic<bool> armed{false};
  std::atomic<int> torn{0};

 private:
  class TornFile : public rocksdb::FSWritableFileOwnerWrapper {
   public:
    TornFile(std::unique_ptr<rocksdb::FSWritableFile> file, TornWalFileSystem* fs)
        : FSWritableFileOwnerWrapper(std::move(file)), fs_(fs) {}
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override {
      if (!fs_->armed.exchange(false)) return target()->Append(data, options, dbg);
      ++fs_->torn;
      target()->Append(rocksdb::Slice(data.data(), data.size() / 2), options, dbg).PermitUncheckedError();
      target()->Flush(options, dbg).PermitUncheckedError();
      return rocksdb::IOStatus::IOError("injected: the disk failed halfway through this write");
    }
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                             const rocksdb::DataVerificationInfo&, rocksdb::IODebugContext* dbg) override {
      return Append(data, options, dbg);
    }

   private:
    TornWalFileSystem* fs_;
  };
};

TEST(PopulationStoreAtomicity, AWriteTornHalfwayIntoTheLogIsInvisibleAndTheStoreReopens) {
  for (const WriteCase& c : WriteCases()) {
    SCOPED_TRACE(c.operation + " changing " + std::to_string(c.changes.size()) + " column families");
    TempDir dir;
    ASSERT_TRUE(dir.ok());
    auto file_system = std::make_shared<TornWalFileSystem>(rocksdb::FileSystem::Default());
    std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(file_system);
    PopulationStoreOptions options;
    options.create_if_missing = true;
    options.env = env.get();
    auto store = PopulationStore::Open(dir.Sub("store"), options);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE(Populate(**store).ok());
    const Dump before = DumpStore(dir.Sub("store"));
    const auto state_before = (*store)->GetRunState(kRun, kTask);

    file_system->armed = true;
    const absl::Status failed = c.write(**store);
    EXPECT_FALSE(failed.ok());
    EXPECT_THAT(std::string(failed.message()), HasSubstr("injected"));
    EXPECT_EQ(file_system->torn.load(), 1) << "the failure hit the log write";
    // Not visible in this process ...
    EXPECT_EQ((*store)->GetRunState(kRun, kTask)->SerializeAsString(), state_before->SerializeAsString());
    EXPECT_EQ((*store)->ListCandidates(kRun, kTask)->size(), 1u);
    store->reset();
    // ... nor after reopening with a healthy disk, which replays the log up to the torn record.
    auto reopened = PopulationStore::Open(dir.Sub("store"), {});
    ASSERT_TRUE(reopened.ok()) << reopened.status();
    EXPECT_EQ(DumpStore(dir.Sub("store")), before);
    const absl::Status retried = c.write(**reopened);
    ASSERT_TRUE(retried.ok()) << retried;
    EXPECT_EQ(Changed(before, DumpStore(dir.Sub("store"))), c.changes);
  }
}

}  // namespace
}  // namespace sparseditto
