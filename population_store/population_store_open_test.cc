// Opening: what is not a store, a store of another schema version, a corrupt store, a store in use.
#include <filesystem>
#include <fstream>
#include <functional>

#include "common/status_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "population_store/population_store.h"
#include "population_store/store_layout.h"
#include "population_store/store_test_util.h"
#include "rocksdb/db.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using namespace store_testing;

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Makes a store at `path` holding one run, task and candidate, and closes it.
void MakeStore(const std::string& path) {
  auto store = PopulationStore::Create(path);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->CreateRun(SampleRun("r")).ok());
  ASSERT_TRUE((*store)->PutTask("r", SampleTask("t")).ok());
  ASSERT_TRUE((*store)->PutCandidate("r", SampleCandidate("c", "t")).ok());
}

// Opens the database at `path` with plain RocksDB (all its column families) and lets `edit` change it.
using RawEdit = std::function<void(rocksdb::DB*, std::map<std::string, rocksdb::ColumnFamilyHandle*>&)>;
void EditRaw(const std::string& path, const RawEdit& edit) {
  rocksdb::Options options;
  options.create_if_missing = true;
  std::vector<std::string> names;
  if (!rocksdb::DB::ListColumnFamilies(options, path, &names).ok()) names = {"default"};
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const std::string& name : names) descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  const rocksdb::Status opened = rocksdb::DB::Open(options, path, descriptors, &handles, &db);
  ASSERT_TRUE(opened.ok()) << opened.ToString();
  std::map<std::string, rocksdb::ColumnFamilyHandle*> by_name;
  for (size_t i = 0; i < names.size(); ++i) by_name[names[i]] = handles[i];
  edit(db, by_name);
  for (auto* handle : handles) ASSERT_TRUE(db->DestroyColumnFamilyHandle(handle).ok());
  ASSERT_TRUE(db->Close().ok());
  delete db;
}

void PutMeta(const std::string& path, std::string_view key, std::string_view value) {
  EditRaw(path, [&](rocksdb::DB* db, auto& cfs) {
    rocksdb::WriteOptions sync;
    sync.sync = true;
    ASSERT_TRUE(db->Put(sync, cfs.at("meta"), key, value).ok());
  });
}

// The first file in `dir` whose name contains `part`.
std::string FileWith(const std::string& dir, std::string_view part) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().find(part) != std::string::npos) return entry.path().string();
  }
  return "";
}

enum class How { kOpen, kReadOnly, kCreateNew };

struct OpenCase {
  std::string name;
  std::function<void(const std::string& path)> prepare;
  How how;
  absl::StatusCode code;
  std::string words;
};

absl::StatusOr<std::unique_ptr<PopulationStore>> OpenAs(const std::string& path, How how) {
  switch (how) {
    case How::kReadOnly:
      return PopulationStore::OpenReadOnly(path);
    case How::kCreateNew:
      return PopulationStore::Create(path);
    case How::kOpen:
      break;
  }
  return PopulationStore::Open(path, {});
}

std::vector<OpenCase> OpenCases() {
  using C = absl::StatusCode;
  return {
      {"absent path", [](const std::string&) {}, How::kOpen, C::kNotFound, "no population store at"},
      {"absent path, read-only", [](const std::string&) {}, How::kReadOnly, C::kNotFound,
       "no population store at"},
      {"empty directory", [](const std::string& p) { fs::create_directory(p); }, How::kOpen, C::kNotFound,
       "the directory is empty"},
      {"plain file", [](const std::string& p) { WriteFile(p, "hello"); }, How::kOpen, C::kFailedPrecondition,
       "is not a directory"},
      {"unrelated files",
       [](const std::string& p) {
         fs::create_directory(p);
         WriteFile(p + "/notes.txt", "hello");
       },
       How::kCreateNew, C::kFailedPrecondition, "holds files but no RocksDB database"},
      {"plain RocksDB database", [](const std::string& p) { EditRaw(p, [](auto*, auto&) {}); }, How::kOpen,
       C::kFailedPrecondition, "RocksDB database but not a SparseDitto population store"},
      {"meta without the format record",
       [](const std::string& p) {
         MakeStore(p);
         EditRaw(p, [](rocksdb::DB* db, auto& cfs) {
           ASSERT_TRUE(db->Delete(rocksdb::WriteOptions(), cfs.at("meta"), "format").ok());
         });
       },
       How::kOpen, C::kFailedPrecondition, "not a SparseDitto population store"},
      {"newer schema version",
       [](const std::string& p) {
         MakeStore(p);
         PutMeta(p, "schema_version", "3");
       },
       How::kOpen, C::kFailedPrecondition, "has schema version 3; this build reads version 2"},
      {"newer schema version, read-only",
       [](const std::string& p) {
         MakeStore(p);
         PutMeta(p, "schema_version", "3");
       },
       How::kReadOnly, C::kFailedPrecondition, "has schema version 3; this build reads version 2"},
      {"unreadable schema version",
       [](const std::string& p) {
         MakeStore(p);
         PutMeta(p, "schema_version", "one");
       },
       How::kOpen, C::kDataLoss, "unreadable schema version 'one'"},
      {"missing column family",
       [](const std::string& p) {
         MakeStore(p);
         EditRaw(p, [](rocksdb::DB* db, auto& cfs) {
           ASSERT_TRUE(db->DropColumnFamily(cfs.at("lineage")).ok());
         });
       },
       How::kOpen, C::kDataLoss, "lacks its 'lineage' column family"},
      {"garbage CURRENT file",
       [](const std::string& p) {
         MakeStore(p);
         WriteFile(p + "/CURRENT", "\x01\x02garbage\n");
       },
       How::kOpen, C::kDataLoss, "corrupt"},
      {"MANIFEST removed",
       [](const std::string& p) {
         MakeStore(p);
         fs::remove(FileWith(p, "MANIFEST-"));
       },
       How::kOpen, C::kDataLoss, "a file the store needs is missing"},
      {"MANIFEST overwritten",
       [](const std::string& p) {
         MakeStore(p);
         WriteFile(FileWith(p, "MANIFEST-"), std::string(4096, 'x'));
       },
       How::kOpen, C::kDataLoss, "Corruption"},
      {"table file truncated",
       [](const std::string& p) {
         MakeStore(p);
         EditRaw(p,
                 [](rocksdb::DB* db, auto& cfs) { ASSERT_TRUE(db->Flush({}, cfs.at("candidates")).ok()); });
         const std::string table = FileWith(p, ".sst");
         ASSERT_FALSE(table.empty());
         fs::resize_file(table, 100);
       },
       How::kOpen, C::kDataLoss, ".sst"},
      {"store exists already", [](const std::string& p) { MakeStore(p); }, How::kCreateNew, C::kAlreadyExists,
       "a store exists at"},
  };
}

TEST(PopulationStoreOpen, RefusesWhatItCannotReadWithAClearError) {
  for (const OpenCase& c : OpenCases()) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    ASSERT_TRUE(dir.ok());
    const std::string path = dir.Sub("store");
    c.prepare(path);
    auto opened = OpenAs(path, c.how);
    ASSERT_FALSE(opened.ok()) << "opened";
    EXPECT_EQ(opened.status().code(), c.code) << opened.status();
    EXPECT_THAT(std::string(opened.status().message()), HasSubstr(c.words));
    EXPECT_THAT(std::string(opened.status().message()), HasSubstr(path)) << "the message names the path";
  }
}

TEST(PopulationStoreOpen, CreatesAtomicallyAndReopens) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.Sub("nested/folders/store");
  MakeStore(path);
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir.Sub("nested/folders"))) {
    left.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(left, std::vector<std::string>{"store"}) << "no temporary folder is left behind";
  auto store = PopulationStore::Open(path, {});
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE((*store)->GetCandidate("r", "c").ok());
  // An empty directory is a place to create one, and a trailing slash names the same folder.
  fs::create_directory(dir.Sub("empty"));
  EXPECT_TRUE(PopulationStore::Create(dir.Sub("empty")).ok());
  EXPECT_TRUE(PopulationStore::Create(dir.Sub("slash/")).ok());
  EXPECT_TRUE(PopulationStore::Open(dir.Sub("slash"), {}).ok());
  EXPECT_EQ(PopulationStore::Open("", {}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PopulationStoreOpen, OneWriterAtATime) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  MakeStore(dir.Sub("store"));
  auto writer = PopulationStore::Open(dir.Sub("store"), {});
  ASSERT_TRUE(writer.ok()) << writer.status();
  auto second = PopulationStore::Open(dir.Sub("store"), {});
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable) << second.status();
  EXPECT_THAT(std::string(second.status().message()), HasSubstr("open for writing elsewhere"));
  EXPECT_TRUE(PopulationStore::OpenReadOnly(dir.Sub("store")).ok());
}

TEST(PopulationStoreOpen, AValueThatDoesNotParseIsDataLoss) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  MakeStore(dir.Sub("store"));
  EditRaw(dir.Sub("store"), [](rocksdb::DB* db, auto& cfs) {
    const std::string key = store_layout::Key({"r", "c"});
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), cfs.at("candidates"), key, "\xff\xff\xff").ok());
  });
  auto store = PopulationStore::Open(dir.Sub("store"), {});
  ASSERT_TRUE(store.ok()) << store.status();
  const absl::Status read = (*store)->GetCandidate("r", "c").status();
  EXPECT_EQ(read.code(), absl::StatusCode::kDataLoss) << read;
  EXPECT_THAT(std::string(read.message()), HasSubstr("candidate c of run r does not parse"));
  EXPECT_EQ((*store)->ListCandidates("r", "t").status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace sparseditto
