// The include scan's memo across processes (client/src/nvrtc/scan_memo.hpp): a new process takes a
// settled header's facts from it, a header changed since is read again whatever the memo says, and
// a memo another uid planted, linked or damaged is never trusted.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include <client/src/nvrtc/directives_codec.hpp>
#include <client/src/nvrtc/include_scan.hpp>
#include <client/src/nvrtc/scan_build_identity.hpp>
#include <client/src/nvrtc/scan_memo.hpp>
#include <client/src/nvrtc/scan_recall.hpp>
#include <proto/byte_io.hpp>
#include <proto/digest.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

using namespace jitcache::client::nvrtc;
using jitcache::testing::TempDir;
using jitcache::testing::write_file;

namespace {

constexpr uid_t k_other_uid = 65534;

// The memo in `directory` for this process, as a new process would open it.
class MemoAt {
 public:
  explicit MemoAt(const std::string& directory) {
    ::setenv("JITCACHE_NVRTC_SCAN_MEMO_DIR", directory.c_str(), 1);
    ::unsetenv("JITCACHE_NVRTC_SCAN_MEMO");
    forget_scanned_files();
  }
  ~MemoAt() {
    ::unsetenv("JITCACHE_NVRTC_SCAN_MEMO_DIR");
    forget_scanned_files();
  }
  MemoAt(const MemoAt&) = delete;
  MemoAt& operator=(const MemoAt&) = delete;
};

std::size_t entries_in(const std::string& directory) {
  std::size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    count += entry.path().filename().string().size() == 32 ? 1 : 0;
  }
  return count;
}

// A scan as a new process without the memo makes it, nothing remembered; the memo is back after.
std::string fresh(const IncludeScanInput& input) {
  ::setenv("JITCACHE_NVRTC_SCAN_MEMO", "0", 1);
  forget_scanned_files();
  auto record = scan_includes(input);
  ::unsetenv("JITCACHE_NVRTC_SCAN_MEMO");
  forget_scanned_files();
  REQUIRE(record);
  return record->text;
}

FileStamp made_up_stamp(long seconds) {
  FileStamp stamp;
  stamp.device = 1;
  stamp.inode = 2;
  stamp.size = 3;
  stamp.modified.tv_sec = seconds;
  stamp.changed.tv_sec = seconds;
  return stamp;
}

MemoizedFile made_up_facts() {
  MemoizedFile file;
  file.digest_hex = std::string(64, 'a');
  file.size = 3;
  file.directives.names = {"a.h", "b.h"};
  file.directives.bracketed = {true, false};
  file.directives.objects = {ObjectMacro{"H", "<a.h>"}};
  file.directives.macro_includes = {"H"};
  file.directives.calls = {MacroCall{"F", {"<c.h>"}, -1, false}};
  return file;
}

std::string only_entry(const std::string& directory) {
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.path().filename().string().size() == 32) return entry.path().string();
  }
  return {};
}

// An entry for `path` in `stamp` as memo_store writes it, but by another build: `identity` is its
// build ID, or none at all (the layout of the builds before entries named theirs).
void plant_entry(const std::string& directory, const std::string& path, const FileStamp& stamp,
                 const MemoizedFile& file, const std::optional<std::string>& identity) {
  const std::string_view magic = "jitcache nvrtc scan memo 1\n";
  std::vector<std::uint8_t> bytes(magic.begin(), magic.end());
  jitcache::proto::ByteWriter out(bytes);
  if (identity) out.blob32(jitcache::proto::as_bytes(*identity));
  out.blob32(jitcache::proto::as_bytes(path));
  for (const std::int64_t field : {static_cast<std::int64_t>(stamp.device), static_cast<std::int64_t>(stamp.inode)}) {
    out.u64(static_cast<std::uint64_t>(field));
  }
  for (const std::int64_t field :
       {static_cast<std::int64_t>(stamp.size), static_cast<std::int64_t>(stamp.modified.tv_sec),
        static_cast<std::int64_t>(stamp.modified.tv_nsec), static_cast<std::int64_t>(stamp.changed.tv_sec),
        static_cast<std::int64_t>(stamp.changed.tv_nsec)}) {
    out.i64(field);
  }
  const std::string name = jitcache::proto::to_hex(jitcache::proto::xxh3_128(jitcache::proto::Bytes(bytes)));
  out.blob32(jitcache::proto::as_bytes(file.digest_hex));
  out.u64(file.size);
  encode_directives(file.directives, out);
  out.checksum(jitcache::proto::xxh3_128(jitcache::proto::Bytes(bytes)));
  const std::string entry = directory + "/" + name;
  jitcache::testing::write_file(entry, std::string(bytes.begin(), bytes.end()));
  ::chmod(entry.c_str(), 0600);
}

}  // namespace

TEST_CASE(
    "scan memo: an entry another build of the client wrote is not used (its parse may have missed what this one "
    "reads)") {
  TempDir dir;
  const MemoAt memo(dir.file("memo"));
  REQUIRE_FALSE(scan_build_identity().empty());
  REQUIRE(scan_memo_unavailable().empty());
  // A settled header that includes another; an earlier build's entry for it says it includes
  // nothing, as a build whose parse missed the directive's form would have written.
  const std::string header = dir.file("inc/v.cuh");
  write_file(header, "#include \"next.cuh\"\n");
  write_file(dir.file("inc/next.cuh"), "int n;\n");
  struct stat st {};
  REQUIRE(::stat(header.c_str(), &st) == 0);
  MemoizedFile missed;
  missed.digest_hex =
      jitcache::proto::to_hex(jitcache::proto::sha256(jitcache::proto::as_bytes("#include \"next.cuh\"\n")));
  missed.size = static_cast<std::size_t>(st.st_size);
  for (const std::optional<std::string>& identity :
       {std::optional<std::string>(), std::optional<std::string>(std::string(40, '0'))}) {
    plant_entry(dir.file("memo"), header, stamp_of(st), missed, identity);
    CHECK_FALSE(memo_find(header, stamp_of(st)));
    forget_scanned_files();
    auto record = scan_includes({"kernel.cu", "#include <v.cuh>\n", {}, {dir.file("inc")}, {}});
    REQUIRE(record);
    CHECK_THAT(record->text, Catch::Contains(dir.file("inc/next.cuh") + std::string(1, '\0') + "file "));
  }
  // This build's own entry is used.
  plant_entry(dir.file("memo"), header, stamp_of(st), missed, scan_build_identity());
  CHECK(memo_find(header, stamp_of(st)));
}

TEST_CASE("scan memo: a new process takes a settled header from the memo, and a changed header is read again") {
  TempDir dir;
  const MemoAt memo(dir.file("memo"));
  const std::string header = dir.file("inc/v.cuh");
  write_file(header, "int v = 1;\n");                // no includes
  write_file(dir.file("inc/same.cuh"), "int a;\n");  // replaced below by a file of the same size
  // Settled: a file changed within the last two seconds is never remembered (its stamp could be
  // shared by a second change within the clock's tick).
  std::this_thread::sleep_for(std::chrono::milliseconds(3100));
  const IncludeScanInput input{"kernel.cu", "#include <v.cuh>\n#include <same.cuh>\n", {}, {dir.file("inc")}, {}};
  auto first = scan_includes(input);
  REQUIRE(first);
  CHECK(entries_in(dir.file("memo")) == 3);  // the two headers, and the whole scan (scan_recall.hpp)
  CHECK(scan_memo_unavailable().empty());
  struct stat st {};
  REQUIRE(::stat(dir.file("memo").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);

  SECTION("a new process's record is the same, from the memo: what the memo says is what it uses") {
    forget_scanned_files();
    auto again = scan_includes(input);
    REQUIRE(again);
    CHECK(again->text == first->text);
    // The memo is what a new process reads: an entry this uid wrote for the same path and stamp
    // decides (a lie here is the uid's own; others cannot write the directory).
    struct stat header_st {};
    REQUIRE(::stat(header.c_str(), &header_st) == 0);
    MemoizedFile lie{std::string(64, 'b'), 11, {}};
    memo_store(header, stamp_of(header_st), lie);
    forget_scanned_files();
    // Other directives, so that no whole scan remembered answers it: the headers' entries do.
    IncludeScanInput other = input;
    other.source += "#include <absent.cuh>\n";
    auto lied = scan_includes(other);
    REQUIRE(lied);
    CHECK_THAT(lied->text, Catch::Contains(header + std::string(1, '\0') + "file " + std::string(64, 'b')));
  }
  SECTION("a header that now includes a file is followed, whatever the memo said of it before") {
    write_file(header, "#include \"new.cuh\"\n");
    write_file(dir.file("inc/new.cuh"), "int n;\n");
    forget_scanned_files();
    auto changed = scan_includes(input);
    REQUIRE(changed);
    CHECK_THAT(changed->text, Catch::Contains(dir.file("inc/new.cuh") + std::string(1, '\0') + "file "));
  }
  SECTION("a header replaced by a same-size file within the same second, its mtime set back, is read again") {
    struct stat before {};
    REQUIRE(::stat(dir.file("inc/same.cuh").c_str(), &before) == 0);
    // In place: same inode and size, mtime restored; only the ctime (which no user can set) moves.
    write_file(dir.file("inc/same.cuh"), "int b;\n");
    const timespec times[2] = {before.st_atim, before.st_mtim};
    REQUIRE(::utimensat(AT_FDCWD, dir.file("inc/same.cuh").c_str(), times, 0) == 0);
    forget_scanned_files();
    auto in_place = scan_includes(input);
    REQUIRE(in_place);
    const std::string new_digest =
        jitcache::proto::to_hex(jitcache::proto::sha256(jitcache::proto::as_bytes("int b;\n")));
    CHECK_THAT(in_place->text, Catch::Contains(new_digest));
    // Renamed over: another inode.
    write_file(dir.file("inc/other.tmp"), "int c;\n");
    std::filesystem::rename(dir.file("inc/other.tmp"), dir.file("inc/same.cuh"));
    REQUIRE(::utimensat(AT_FDCWD, dir.file("inc/same.cuh").c_str(), times, 0) == 0);
    forget_scanned_files();
    auto renamed = scan_includes(input);
    REQUIRE(renamed);
    CHECK_THAT(renamed->text, Catch::Contains(jitcache::proto::to_hex(
                                  jitcache::proto::sha256(jitcache::proto::as_bytes("int c;\n")))));
  }
}

TEST_CASE("scan memo: an entry round-trips, and every truncation or flipped byte of it is ignored, never trusted") {
  TempDir dir;
  const MemoAt memo(dir.file("memo"));
  const FileStamp stamp = made_up_stamp(1000);
  memo_store("/x/h.cuh", stamp, made_up_facts());
  auto found = memo_find("/x/h.cuh", stamp);
  REQUIRE(found);
  CHECK(found->digest_hex == std::string(64, 'a'));
  CHECK(found->directives.names == made_up_facts().directives.names);
  CHECK(found->directives.objects.at(0).body == "<a.h>");
  CHECK(found->directives.calls.at(0).arguments.at(0) == "<c.h>");
  CHECK_FALSE(memo_find("/x/h.cuh", made_up_stamp(1001)));  // another state of the file
  CHECK_FALSE(memo_find("/x/other.cuh", stamp));

  const std::string entry = only_entry(dir.file("memo"));
  const std::string bytes = jitcache::testing::read_file(entry);
  for (std::size_t length = 0; length < bytes.size(); ++length) {
    jitcache::testing::write_file(entry, bytes.substr(0, length));
    ::chmod(entry.c_str(), 0600);
    CHECK_FALSE(memo_find("/x/h.cuh", stamp));
  }
  for (std::size_t at = 0; at < bytes.size(); ++at) {
    std::string flipped = bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x20);
    jitcache::testing::write_file(entry, flipped);
    ::chmod(entry.c_str(), 0600);
    CHECK_FALSE(memo_find("/x/h.cuh", stamp));
  }
}

TEST_CASE("scan memo: processes writing one entry at once leave one whole entry") {
  TempDir dir;
  const MemoAt memo(dir.file("memo"));
  const FileStamp stamp = made_up_stamp(2000);
  std::vector<pid_t> children;
  for (int child = 0; child < 4; ++child) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      MemoizedFile facts = made_up_facts();
      facts.directives.names.assign(static_cast<std::size_t>(child) * 50 + 1, "n.h");  // sizes differ
      facts.directives.bracketed.assign(facts.directives.names.size(), false);
      for (int i = 0; i < 200; ++i) memo_store("/x/h.cuh", stamp, facts);
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (int i = 0; i < 400; ++i) {
    // Read while they write: a whole entry of one of them, or none, never a mix.
    if (auto found = memo_find("/x/h.cuh", stamp)) CHECK((found->directives.names.size() - 1) % 50 == 0);
  }
  for (const pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(status == 0);
  }
  auto found = memo_find("/x/h.cuh", stamp);
  REQUIRE(found);
  CHECK((found->directives.names.size() - 1) % 50 == 0);
  CHECK(entries_in(dir.file("memo")) == 1);
}

TEST_CASE("scan memo: a directory, entry or link another uid planted is not used") {
  if (::geteuid() != 0) JITCACHE_SKIP("needs root to make files another uid owns");
  TempDir dir;
  const FileStamp stamp = made_up_stamp(3000);
  SECTION("a directory another uid owns") {
    std::filesystem::create_directories(dir.file("memo"));
    ::chmod(dir.file("memo").c_str(), 0700);
    REQUIRE(::chown(dir.file("memo").c_str(), k_other_uid, k_other_uid) == 0);
    const MemoAt memo(dir.file("memo"));
    CHECK_THAT(scan_memo_unavailable(), Catch::Contains("not a directory (not a link) that this uid owns"));
    memo_store("/x/h.cuh", stamp, made_up_facts());
    CHECK(entries_in(dir.file("memo")) == 0);
  }
  SECTION("a directory of the real uid, in a process whose effective uid is another (set-user-ID)") {
    // The process writes and trusts the memo as its effective uid: a set-user-ID program run by
    // another user must not take that user's entries (whose lies would become its results).
    std::filesystem::create_directories(dir.file("memo"));
    ::chmod(dir.file("memo").c_str(), 0700);
    REQUIRE(::chown(dir.file("memo").c_str(), k_other_uid, k_other_uid) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      if (::setresuid(k_other_uid, 0, 0) != 0) ::_exit(2);
      const MemoAt memo(dir.file("memo"));
      ::_exit(scan_memo_unavailable().empty() ? 1 : 0);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  SECTION("a directory others may write") {
    std::filesystem::create_directories(dir.file("memo"));
    ::chmod(dir.file("memo").c_str(), 0777);
    const MemoAt memo(dir.file("memo"));
    CHECK_FALSE(scan_memo_unavailable().empty());
  }
  SECTION("a link in the directory's place, to a directory of this uid") {
    std::filesystem::create_directories(dir.file("real"));
    ::chmod(dir.file("real").c_str(), 0700);
    std::filesystem::create_directory_symlink(dir.file("real"), dir.file("memo"));
    ::lchown(dir.file("memo").c_str(), k_other_uid, k_other_uid);
    const MemoAt memo(dir.file("memo"));
    CHECK_FALSE(scan_memo_unavailable().empty());
    memo_store("/x/h.cuh", stamp, made_up_facts());
    CHECK(entries_in(dir.file("real")) == 0);
  }
  SECTION("an entry another uid owns, or a link in an entry's place") {
    const MemoAt memo(dir.file("memo"));
    memo_store("/x/h.cuh", stamp, made_up_facts());
    const std::string entry = only_entry(dir.file("memo"));
    REQUIRE(memo_find("/x/h.cuh", stamp));
    REQUIRE(::chown(entry.c_str(), k_other_uid, k_other_uid) == 0);
    CHECK_FALSE(memo_find("/x/h.cuh", stamp));
    std::filesystem::rename(entry, dir.file("planted"));
    REQUIRE(::chown(dir.file("planted").c_str(), 0, 0) == 0);
    REQUIRE(memo_find("/x/h.cuh", stamp) == std::nullopt);
    std::filesystem::create_symlink(dir.file("planted"), entry);
    CHECK_FALSE(memo_find("/x/h.cuh", stamp));
    // An entry others may read or write is not this uid's private one either.
    std::filesystem::remove(entry);
    std::filesystem::rename(dir.file("planted"), entry);
    REQUIRE(memo_find("/x/h.cuh", stamp));
    ::chmod(entry.c_str(), 0644);
    CHECK_FALSE(memo_find("/x/h.cuh", stamp));
  }
}

TEST_CASE("scan memo: no usable home, or the memo turned off, just means no memo") {
  TempDir dir;
  write_file(dir.file("inc/v.cuh"), "int v;\n");
  const IncludeScanInput input{"kernel.cu", "#include <v.cuh>\n", {}, {dir.file("inc")}, {}};
  ::unsetenv("JITCACHE_NVRTC_SCAN_MEMO_DIR");
  const char* saved_home = std::getenv("HOME");
  const std::string home = saved_home == nullptr ? std::string() : saved_home;
  const char* saved_cache = std::getenv("XDG_CACHE_HOME");
  const std::string cache = saved_cache == nullptr ? std::string() : saved_cache;
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", "/proc/no-home-here", 1);  // nothing can be made under /proc
  forget_scanned_files();
  CHECK(scan_memo_directory_path() == "/proc/no-home-here/.cache/jitcache/nvrtc-scan");
  CHECK_FALSE(scan_memo_unavailable().empty());
  CHECK(scan_includes(input));
  ::setenv("XDG_CACHE_HOME", dir.file("cache").c_str(), 1);
  CHECK(scan_memo_directory_path() == dir.file("cache") + "/jitcache/nvrtc-scan");
  ::setenv("JITCACHE_NVRTC_SCAN_MEMO", "0", 1);
  forget_scanned_files();
  CHECK_THAT(scan_memo_unavailable(), Catch::Contains("off"));
  CHECK(scan_includes(input));
  CHECK_FALSE(std::filesystem::exists(dir.file("cache")));
  ::unsetenv("JITCACHE_NVRTC_SCAN_MEMO");
  if (saved_home != nullptr) ::setenv("HOME", home.c_str(), 1);
  if (saved_cache != nullptr) {
    ::setenv("XDG_CACHE_HOME", cache.c_str(), 1);
  } else {
    ::unsetenv("XDG_CACHE_HOME");
  }
  forget_scanned_files();
}

TEST_CASE("scan memo: past its bound the oldest entries go, and a crashed writer's old temporary file too") {
  TempDir dir;
  const MemoAt memo(dir.file("memo"));
  std::set<std::string> seen;
  for (long i = 0; i < 40; ++i) {
    memo_store("/x/h.cuh", made_up_stamp(5000 + i), made_up_facts());
    // The entry just written, given an mtime that orders the entries as they were written.
    for (const auto& entry : std::filesystem::directory_iterator(dir.file("memo"))) {
      if (!seen.insert(entry.path().string()).second) continue;
      const timespec times[2] = {{10000 + i, 0}, {10000 + i, 0}};
      REQUIRE(::utimensat(AT_FDCWD, entry.path().c_str(), times, 0) == 0);
    }
  }
  REQUIRE(entries_in(dir.file("memo")) == 40);
  write_file(dir.file("memo/0123.tmp.1.0"), "partial");
  const timespec old_times[2] = {{1000, 0}, {1000, 0}};
  REQUIRE(::utimensat(AT_FDCWD, dir.file("memo/0123.tmp.1.0").c_str(), old_times, 0) == 0);
  scan_memo_keep_bounded(20);
  CHECK(entries_in(dir.file("memo")) == 15);
  for (long i = 0; i < 40; ++i) {
    INFO(i);
    CHECK(static_cast<bool>(memo_find("/x/h.cuh", made_up_stamp(5000 + i))) == (i >= 25));
  }
  CHECK_FALSE(std::filesystem::exists(dir.file("memo/0123.tmp.1.0")));
}

// A whole scan remembered in the process (client/src/nvrtc/scan_recall.hpp): a later compile with
// the same directives only stats the record's paths, and gets what a new scan would give.
TEST_CASE("scan recall: a later scan of the same directives is the record a new scan makes, whatever changed") {
  TempDir dir;
  const MemoAt memo(dir.file("memo"));
  write_file(dir.file("second/a.cuh"), "#include \"b.cuh\"\n");
  write_file(dir.file("second/b.cuh"), "int b;\n");
  std::filesystem::create_directories(dir.file("first"));
  std::this_thread::sleep_for(std::chrono::milliseconds(3100));  // settled, as above
  // Two programs that differ in code, not in directives.
  const IncludeScanInput one{
      "kernel.cu", "#include <a.cuh>\nint one;\n", {}, {dir.file("first"), dir.file("second")}, {}};
  const IncludeScanInput two{
      "kernel.cu", "#include <a.cuh>\nint two;\n", {}, {dir.file("first"), dir.file("second")}, {}};

  const std::string original = fresh(one);
  REQUIRE(scan_includes(one));  // remembered, in the process and in the memo
  const std::size_t recalled = scans_recalled();
  auto again = scan_includes(two);
  REQUIRE(again);
  CHECK(again->text == original);
  CHECK(scans_recalled() == recalled + 1);
  // A new process: the whole scan from the memo, one entry instead of one per header.
  forget_scanned_files();
  auto from_memo = scan_includes(two);
  REQUIRE(from_memo);
  CHECK(from_memo->text == original);
  CHECK(scans_recalled() == recalled + 2);

  // A header appears earlier in the search: a miss of the remembered record, the new one.
  write_file(dir.file("first/a.cuh"), "int shadow;\n");
  auto shadowed = scan_includes(one);
  REQUIRE(shadowed);
  CHECK(shadowed->text != original);
  CHECK(shadowed->text == fresh(one));
  // Gone again: the remembered record holds once more (the fresh scan above forgot it: made again).
  ::unlink(dir.file("first/a.cuh").c_str());
  CHECK(fresh(one) == original);
  // A header changed in place, its size and mtime kept: only the ctime moved.
  struct stat before {};
  REQUIRE(::stat(dir.file("second/b.cuh").c_str(), &before) == 0);
  write_file(dir.file("second/b.cuh"), "int c;\n");
  const timespec times[2] = {before.st_atim, before.st_mtim};
  REQUIRE(::utimensat(AT_FDCWD, dir.file("second/b.cuh").c_str(), times, 0) == 0);
  auto changed = scan_includes(two);
  REQUIRE(changed);
  CHECK(changed->text != original);
  CHECK(changed->text == fresh(two));
  // A directory where a header was looked for is no header.
  std::filesystem::create_directories(dir.file("first/b.cuh"));
  auto with_directory = scan_includes(two);
  REQUIRE(with_directory);
  CHECK(with_directory->text == fresh(two));
}

// CuPy's names: each program in a temporary directory of its own, removed before the compile.
TEST_CASE("scan recall: programs named in other directories share a scan, their own paths joined to each") {
  TempDir dir;
  const MemoAt memo(dir.file("memo"));
  write_file(dir.file("inc/a.cuh"), "int a;\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(3100));  // settled, as above
  const auto input = [&](const std::string& directory, const std::vector<std::string>& include_paths) {
    return IncludeScanInput{
        dir.file(directory + "/0f3c.cubin.cu"), "#include \"local.cuh\"\n#include <a.cuh>\n", {}, include_paths, {}};
  };

  const std::vector<std::string> search = {dir.file("inc")};
  REQUIRE(scan_includes(input("tmp_a1", search)));  // remembered
  const std::size_t recalled = scans_recalled();
  auto other = scan_includes(input("tmp_b2", search));
  REQUIRE(other);
  CHECK(scans_recalled() == recalled + 1);
  CHECK_THAT(other->text, Catch::Contains(dir.file("tmp_b2/local.cuh") + std::string(1, '\0') + "absent"));
  CHECK(other->text == fresh(input("tmp_b2", search)));

  // The source written to the program's own name just before (older CuPy keeps it there while
  // it compiles): a new file each time, compared by its content.
  write_file(dir.file("tmp_f6/0f3c.cubin.cu"), "#include \"local.cuh\"\n#include <a.cuh>\n");
  write_file(dir.file("tmp_g7/0f3c.cubin.cu"), "#include \"local.cuh\"\n#include <a.cuh>\n");
  REQUIRE(scan_includes(input("tmp_f6", search)));  // remembered: the program's own file needs no age
  const std::size_t own_before = scans_recalled();
  auto own = scan_includes(input("tmp_g7", search));
  REQUIRE(own);
  CHECK(scans_recalled() == own_before + 1);
  CHECK(own->text == fresh(input("tmp_g7", search)));
  write_file(dir.file("tmp_h8/0f3c.cubin.cu"), "int other;\n");  // another content there: its own record
  auto other_content = scan_includes(input("tmp_h8", search));
  REQUIRE(other_content);
  CHECK(other_content->text == fresh(input("tmp_h8", search)));

  // A header beside this program: its own record, not the other's.
  write_file(dir.file("tmp_c3/local.cuh"), "int local;\n");
  auto beside = scan_includes(input("tmp_c3", search));
  REQUIRE(beside);
  CHECK(beside->text == fresh(input("tmp_c3", search)));
  CHECK_THAT(beside->text, Catch::Contains(dir.file("tmp_c3/local.cuh") + std::string(1, '\0') + "file "));

  // An include path under the program's directory is named by the options: the whole name decides.
  const std::vector<std::string> inside = {dir.file("tmp_d4/inc"), dir.file("inc")};
  REQUIRE(scan_includes(input("tmp_d4", inside)));  // remembered, under its whole name
  const std::size_t before = scans_recalled();
  const std::vector<std::string> inside_other = {dir.file("tmp_d4/inc"), dir.file("inc")};
  auto under = scan_includes(input("tmp_e5", inside_other));
  CHECK(scans_recalled() == before);
  REQUIRE(under);
  CHECK(under->text == fresh(input("tmp_e5", inside_other)));
}
