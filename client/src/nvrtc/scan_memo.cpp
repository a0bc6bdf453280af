#include <client/src/nvrtc/scan_memo.hpp>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <vector>

#include <client/src/nvrtc/directives_codec.hpp>
#include <client/src/nvrtc/scan_build_identity.hpp>
#include <common/client_environment.hpp>
#include <common/unique_fd.hpp>
#include <proto/byte_io.hpp>
#include <proto/digest.hpp>

namespace jitcache::client::nvrtc {

namespace {

// Names the layout (directives_codec.hpp): a memo written by another client version is not read.
constexpr std::string_view k_magic = "jitcache nvrtc scan memo 1\n";
// Rationale: an entry is a header's directives; the largest CCCL header gives tens of KiB. A file
// beyond this is not one this code wrote, and is not read into memory.
constexpr std::size_t k_max_entry_bytes = std::size_t{4} << 20;
// Rationale: a check of the directory's size costs a readdir of up to k_max_scan_memo_entries
// names; once per this many stores (and at a process's first) keeps it off the scan's path.
constexpr std::size_t k_stores_between_checks = 1024;

struct MemoState {
  std::mutex mutex;
  bool opened = false;
  common::UniqueFd directory;
  std::string unavailable;
  std::size_t stores = 0;
};

// Never destroyed: a compile on another thread may outlive static destruction at exit.
MemoState& state() {
  static auto* memo = new MemoState();
  return *memo;
}

std::string home_directory() {
  if (const char* home = ::secure_getenv("HOME"); home != nullptr && home[0] == '/') return home;
  struct passwd entry {};
  struct passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (::getpwuid_r(::geteuid(), &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr &&
      found->pw_dir != nullptr && found->pw_dir[0] == '/') {
    return found->pw_dir;
  }
  return {};
}

// Makes every missing directory of `path` (0700: only this uid needs them); an existing one is
// left as it is.
void make_directories(const std::string& path) {
  for (std::size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
    ::mkdir(path.substr(0, slash).c_str(), 0700);
  }
  ::mkdir(path.c_str(), 0700);
}

// The effective uid: the one the process writes as, and the one the daemon files its results
// under. A set-user-ID program's real uid is its caller's, whose entries it must not trust.
bool private_to_this_uid(const struct stat& st) { return st.st_uid == ::geteuid() && (st.st_mode & 077) == 0; }

// Opens the directory, or says why not.
void open_directory(MemoState& memo) {
  memo.opened = true;
  if (!common::client_env_flag("JITCACHE_NVRTC_SCAN_MEMO", true)) {
    memo.unavailable = "the scan memo is off (JITCACHE_NVRTC_SCAN_MEMO)";
    return;
  }
  // Secure-execution mode (set-user-ID, set-group-ID, file capabilities): the environment that
  // names the directory is the caller's.
  if (::getauxval(AT_SECURE) != 0) {
    memo.unavailable = "no scan memo in a set-user-ID or otherwise secure-execution process";
    return;
  }
  if (scan_build_identity().empty()) {
    memo.unavailable = "no scan memo: the client's code has no build ID to tell its entries from another build's";
    return;
  }
  const std::string path = scan_memo_directory_path();
  if (path.empty()) {
    memo.unavailable = "no scan memo: no absolute JITCACHE_NVRTC_SCAN_MEMO_DIR, XDG_CACHE_HOME or home directory";
    return;
  }
  make_directories(path);
  common::UniqueFd directory(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!directory || ::fstat(directory.get(), &st) != 0 || !S_ISDIR(st.st_mode) || !private_to_this_uid(st)) {
    memo.unavailable = "no scan memo: " + path +
                       " is not a directory (not a link) that this uid owns and only "
                       "it may use";
    return;
  }
  memo.directory = std::move(directory);
}

// The directory's descriptor (a duplicate the caller closes), or none.
common::UniqueFd directory_descriptor() {
  MemoState& memo = state();
  std::lock_guard lock(memo.mutex);
  if (!memo.opened) open_directory(memo);
  if (!memo.directory) return {};
  return common::UniqueFd(::fcntl(memo.directory.get(), F_DUPFD_CLOEXEC, 0));
}

// What an entry begins with: the magic, the build that parsed the file (scan_build_identity.hpp),
// the path and the stamp, which a lookup compares whole.
std::vector<std::uint8_t> entry_head(const std::string& path, const FileStamp& stamp) {
  std::vector<std::uint8_t> bytes(k_magic.begin(), k_magic.end());
  proto::ByteWriter out(bytes);
  out.blob32(proto::as_bytes(scan_build_identity()));
  out.blob32(proto::as_bytes(path));
  encode_stamp(stamp, out);
  return bytes;
}

// The entry's file name: a digest of its head, so a path and stamp have one place.
std::string entry_name(const std::vector<std::uint8_t>& head) {
  return proto::to_hex(proto::xxh3_128(proto::Bytes(head.data(), head.size())));
}

bool is_entry_name(std::string_view name) {
  return name.size() == 32 && name.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// Removes the oldest entries beyond three quarters of `max_entries` when there are more, and
// temporary files a writer left over an hour ago (it crashed between open and rename).
void keep_bounded(int directory_fd, std::size_t max_entries) {
  const int listing = ::fcntl(directory_fd, F_DUPFD_CLOEXEC, 0);  // closedir closes it
  if (listing < 0) return;
  DIR* dir = ::fdopendir(listing);
  if (dir == nullptr) {
    ::close(listing);
    return;
  }
  // A duplicate shares the file offset with the memo's descriptor: an earlier listing left it at
  // the end.
  ::rewinddir(dir);
  struct Entry {
    timespec modified;
    std::string name;
  };
  std::vector<Entry> entries;
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  while (const dirent* found = ::readdir(dir)) {
    const std::string_view name = found->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    if (::fstatat(directory_fd, found->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!is_entry_name(name)) {
      if (name.find(".tmp.") != std::string_view::npos && now.tv_sec - st.st_mtim.tv_sec > 3600) {
        ::unlinkat(directory_fd, found->d_name, 0);
      }
      continue;
    }
    entries.push_back(Entry{st.st_mtim, std::string(name)});
  }
  ::closedir(dir);
  if (entries.size() <= max_entries) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.modified.tv_sec != b.modified.tv_sec ? a.modified.tv_sec < b.modified.tv_sec
                                                  : a.modified.tv_nsec < b.modified.tv_nsec;
  });
  const std::size_t remove = entries.size() - max_entries * 3 / 4;
  for (std::size_t i = 0; i < remove; ++i) ::unlinkat(directory_fd, entries[i].name.c_str(), 0);
}

}  // namespace

void encode_stamp(const FileStamp& stamp, proto::ByteWriter& out) {
  out.u64(static_cast<std::uint64_t>(stamp.device));
  out.u64(static_cast<std::uint64_t>(stamp.inode));
  out.i64(static_cast<std::int64_t>(stamp.size));
  out.i64(static_cast<std::int64_t>(stamp.modified.tv_sec));
  out.i64(static_cast<std::int64_t>(stamp.modified.tv_nsec));
  out.i64(static_cast<std::int64_t>(stamp.changed.tv_sec));
  out.i64(static_cast<std::int64_t>(stamp.changed.tv_nsec));
}

std::optional<FileStamp> decode_stamp(proto::ByteReader& in) {
  auto device = in.u64("device");
  auto inode = in.u64("inode");
  auto size = in.i64("size");
  auto modified = in.i64("mtime");
  auto modified_ns = in.i64("mtime ns");
  auto changed = in.i64("ctime");
  auto changed_ns = in.i64("ctime ns");
  if (!device || !inode || !size || !modified || !modified_ns || !changed || !changed_ns) return std::nullopt;
  FileStamp stamp;
  stamp.device = static_cast<dev_t>(*device);
  stamp.inode = static_cast<ino_t>(*inode);
  stamp.size = static_cast<off_t>(*size);
  stamp.modified = timespec{static_cast<time_t>(*modified), static_cast<long>(*modified_ns)};
  stamp.changed = timespec{static_cast<time_t>(*changed), static_cast<long>(*changed_ns)};
  return stamp;
}

FileStamp stamp_of(const struct stat& st) {
  return FileStamp{st.st_dev, st.st_ino, st.st_size, st.st_mtim, st.st_ctim};
}

std::string scan_memo_directory_path() {
  if (auto directory = common::client_env("JITCACHE_NVRTC_SCAN_MEMO_DIR"); directory && (*directory)[0] == '/') {
    return *directory;
  }
  if (auto cache = common::client_env("XDG_CACHE_HOME"); cache && (*cache)[0] == '/') {
    return *cache + "/jitcache/nvrtc-scan";
  }
  const std::string home = home_directory();
  return home.empty() ? std::string() : home + "/.cache/jitcache/nvrtc-scan";
}

std::string scan_memo_unavailable() {
  MemoState& memo = state();
  std::lock_guard lock(memo.mutex);
  if (!memo.opened) open_directory(memo);
  return memo.unavailable;
}

void scan_memo_reset() {
  MemoState& memo = state();
  std::lock_guard lock(memo.mutex);
  memo.opened = false;
  memo.directory.reset();
  memo.unavailable.clear();
  memo.stores = 0;
}

namespace {

// The payload of the entry that begins with `head`; nullopt when there is none fit to read.
std::optional<std::vector<std::uint8_t>> read_entry(const std::vector<std::uint8_t>& head) {
  const common::UniqueFd directory = directory_descriptor();
  if (!directory) return std::nullopt;
  const common::UniqueFd fd(
      ::openat(directory.get(), entry_name(head).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || !private_to_this_uid(st) ||
      static_cast<std::size_t>(st.st_size) > k_max_entry_bytes ||
      static_cast<std::size_t>(st.st_size) < head.size() + 16) {
    return std::nullopt;
  }
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(st.st_size));
  std::size_t have = 0;
  while (have < bytes.size()) {
    const ssize_t got = ::read(fd.get(), bytes.data() + have, bytes.size() - have);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return std::nullopt;  // shorter than its stat said: being replaced, or damaged
    have += static_cast<std::size_t>(got);
  }
  const std::size_t body_end = bytes.size() - 16;
  const proto::Checksum128 sum = proto::xxh3_128(proto::Bytes(bytes.data(), body_end));
  if (!std::equal(sum.bytes.begin(), sum.bytes.end(), bytes.begin() + static_cast<std::ptrdiff_t>(body_end))) {
    return std::nullopt;
  }
  if (!std::equal(head.begin(), head.end(), bytes.begin())) return std::nullopt;  // another key
  bytes.resize(body_end);
  bytes.erase(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(head.size()));
  return bytes;
}

// Writes the entry `head` + `payload` + its checksum into place; failures are silent.
void write_entry(std::vector<std::uint8_t> bytes, const std::vector<std::uint8_t>& payload) {
  const common::UniqueFd directory = directory_descriptor();
  if (!directory) return;
  const std::string name = entry_name(bytes);
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  {
    proto::ByteWriter out(bytes);
    out.checksum(proto::xxh3_128(proto::Bytes(bytes.data(), bytes.size())));
  }
  if (bytes.size() > k_max_entry_bytes) return;
  static std::atomic<unsigned> counter{0};
  const std::string temporary = name + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    const common::UniqueFd fd(
        ::openat(directory.get(), temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return;
    std::size_t written = 0;
    while (written < bytes.size()) {
      const ssize_t put = ::write(fd.get(), bytes.data() + written, bytes.size() - written);
      if (put < 0 && errno == EINTR) continue;
      if (put <= 0) {
        ::unlinkat(directory.get(), temporary.c_str(), 0);
        return;
      }
      written += static_cast<std::size_t>(put);
    }
  }
  if (::renameat(directory.get(), temporary.c_str(), directory.get(), name.c_str()) != 0) {
    ::unlinkat(directory.get(), temporary.c_str(), 0);
    return;
  }
  bool check = false;
  {
    MemoState& memo = state();
    std::lock_guard lock(memo.mutex);
    check = memo.stores++ % k_stores_between_checks == 0;
  }
  if (check) keep_bounded(directory.get(), k_max_scan_memo_entries);
}

// Rationale: a path is a C string; a key that begins with a NUL is no file's path, so a keyed
// entry and a file's entry never share a head.
std::vector<std::uint8_t> keyed_head(std::string_view kind, std::string_view key) {
  std::string path(1, '\0');
  path += kind;
  path.push_back('\0');
  path += key;
  return entry_head(path, FileStamp{});
}

}  // namespace

std::optional<MemoizedFile> memo_find(const std::string& path, const FileStamp& stamp) {
  const std::optional<std::vector<std::uint8_t>> payload = read_entry(entry_head(path, stamp));
  if (!payload) return std::nullopt;
  proto::ByteReader in(proto::Bytes(payload->data(), payload->size()));
  MemoizedFile file;
  auto digest = in.blob32("digest");
  auto size = in.u64("size");
  if (!digest || digest->size() != 64 || !size) return std::nullopt;
  file.digest_hex.assign(reinterpret_cast<const char*>(digest->data()), digest->size());
  if (file.digest_hex.find_first_not_of("0123456789abcdef") != std::string::npos) return std::nullopt;
  file.size = static_cast<std::size_t>(*size);
  auto directives = decode_directives(in);
  if (!directives || in.remaining() != 0) return std::nullopt;
  file.directives = std::move(*directives);
  return file;
}

void memo_store(const std::string& path, const FileStamp& stamp, const MemoizedFile& file) {
  std::vector<std::uint8_t> payload;
  proto::ByteWriter out(payload);
  out.blob32(proto::as_bytes(file.digest_hex));
  out.u64(file.size);
  encode_directives(file.directives, out);
  write_entry(entry_head(path, stamp), payload);
}

std::optional<std::vector<std::uint8_t>> memo_find_keyed(std::string_view kind, std::string_view key) {
  return read_entry(keyed_head(kind, key));
}

void memo_store_keyed(std::string_view kind, std::string_view key, const std::vector<std::uint8_t>& payload) {
  write_entry(keyed_head(kind, key), payload);
}

void scan_memo_keep_bounded(std::size_t max_entries) {
  const common::UniqueFd directory = directory_descriptor();
  if (directory) keep_bounded(directory.get(), max_entries);
}

}  // namespace jitcache::client::nvrtc
