#include <proto/signing_key_file.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <common/unique_fd.hpp>

namespace jitcache::proto {

namespace {

std::string what_file(KeyFileKind kind, const std::string& path) {
  return (kind == KeyFileKind::private_key ? "the signing key " : "the public key ") + path;
}

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// Rationale: the daemon reads its signing key at start-up, often as root or as its own user; a
// key another uid owns could be swapped by that uid for one of its choosing, and one the group or
// others may read is no longer a secret. ssh refuses its private keys on the same grounds.
common::Result<void> check_private_key_file(const struct stat& st, const std::string& path) {
  const uid_t euid = ::geteuid();
  if (st.st_uid != euid) {
    return common::make_error(common::ErrorCode::forbidden,
                              "the signing key " + path + " is owned by uid " + std::to_string(st.st_uid) +
                                  ", not by uid " + std::to_string(euid) +
                                  " that reads it; a key file must belong to its reader (chown " +
                                  std::to_string(euid) + " " + path + ", then chmod 600 " + path + ")");
  }
  if ((st.st_mode & 077) != 0) {
    return common::make_error(common::ErrorCode::forbidden,
                              "the signing key " + path + " may be read or written by its group or others (mode " +
                                  octal_mode(st.st_mode) + "): chmod 600 " + path);
  }
  return {};
}

common::Result<common::UniqueFd> open_key_file(const std::string& path, KeyFileKind kind) {
  // O_NONBLOCK: opening a FIFO planted under the key's name must not hang the daemon's start;
  // fstat then refuses it as not a regular file.
  int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
  if (kind == KeyFileKind::private_key) flags |= O_NOFOLLOW;
  common::UniqueFd fd(::open(path.c_str(), flags));
  if (!fd) {
    const int error = errno;
    if (error == ELOOP && kind == KeyFileKind::private_key) {
      return common::make_error(common::ErrorCode::forbidden,
                                "the signing key " + path +
                                    " is a symbolic link; name the key file itself (whoever can change the link "
                                    "chooses the key)");
    }
    return common::make_error(common::ErrorCode::io,
                              "cannot open " + what_file(kind, path) + ": " + std::strerror(error));
  }
  return fd;
}

common::Result<void> write_all(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return common::make_error(common::ErrorCode::io, "cannot write " + path + ": " + std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  if (::fsync(fd) != 0) {
    return common::make_error(common::ErrorCode::io, "cannot sync " + path + ": " + std::strerror(errno));
  }
  return {};
}

common::Result<common::UniqueFd> create_exclusive(const std::string& path, mode_t mode) {
  common::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd) {
    const int error = errno;
    if (error == EEXIST) {
      return common::make_error(common::ErrorCode::io,
                                path +
                                    " already exists; a key file is never overwritten (remove it, or choose "
                                    "another prefix)");
    }
    return common::make_error(common::ErrorCode::io, "cannot create " + path + ": " + std::strerror(error));
  }
  return fd;
}

// Removes, on every path out of write_key_pair_files but success, the files it created.
class CreatedFiles {
 public:
  void add(std::string path) { m_paths.push_back(std::move(path)); }
  void keep() { m_paths.clear(); }
  ~CreatedFiles() {
    for (const auto& path : m_paths) ::unlink(path.c_str());
  }

 private:
  std::vector<std::string> m_paths;
};

}  // namespace

common::Result<std::string> read_key_file(const std::string& path, KeyFileKind kind) {
  JITCACHE_TRY_ASSIGN(const common::UniqueFd fd, open_key_file(path, kind));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return common::make_error(common::ErrorCode::io,
                              "cannot stat " + what_file(kind, path) + ": " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return common::make_error(common::ErrorCode::invalid_argument, what_file(kind, path) + " is not a regular file");
  }
  if (kind == KeyFileKind::private_key) JITCACHE_TRY(check_private_key_file(st, path));

  const auto too_large = [&] {
    return common::make_error(common::ErrorCode::too_large, what_file(kind, path) + " is larger than " +
                                                                std::to_string(k_max_key_file_bytes) +
                                                                " bytes: not a key file");
  };
  if (st.st_size > static_cast<off_t>(k_max_key_file_bytes)) return too_large();
  // Read one byte past the limit: the file may have grown since fstat.
  std::string bytes(k_max_key_file_bytes + 1, '\0');
  std::size_t length = 0;
  while (length < bytes.size()) {
    const ssize_t n = ::read(fd.get(), bytes.data() + length, bytes.size() - length);
    if (n < 0) {
      if (errno == EINTR) continue;
      return common::make_error(common::ErrorCode::io,
                                "cannot read " + what_file(kind, path) + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    length += static_cast<std::size_t>(n);
  }
  if (length > k_max_key_file_bytes) return too_large();
  bytes.resize(length);
  return bytes;
}

common::Result<void> write_key_pair_files(const std::string& prefix, std::string_view private_pem,
                                          std::string_view public_pem) {
  const std::string private_path = prefix + ".key";
  const std::string public_path = prefix + ".pub";
  CreatedFiles created;
  JITCACHE_TRY_ASSIGN(const common::UniqueFd private_fd, create_exclusive(private_path, 0600));
  created.add(private_path);
  JITCACHE_TRY_ASSIGN(const common::UniqueFd public_fd, create_exclusive(public_path, 0644));
  created.add(public_path);
  JITCACHE_TRY(write_all(private_fd.get(), private_pem, private_path));
  JITCACHE_TRY(write_all(public_fd.get(), public_pem, public_path));
  created.keep();
  return {};
}

}  // namespace jitcache::proto
