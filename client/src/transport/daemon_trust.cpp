#include <client/src/transport/daemon_trust.hpp>

#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>

#include <client/src/transport/socket_access.hpp>
#include <common/client_environment.hpp>

namespace jitcache::client::transport {

using common::ErrorCode;
using common::make_error;

namespace {

// Rationale: the kernel's own limit on symbolic links followed in one path lookup (MAXSYMLINKS), so
// a path the kernel resolves is never refused for its links alone.
constexpr int k_max_links = 40;

std::optional<uid_t> parse_uid(std::string_view text) {
  unsigned long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  // (uid_t)-1 is "no uid" to the kernel's calls, never a process's uid.
  if (value >= static_cast<unsigned long>(static_cast<uid_t>(-1))) return std::nullopt;
  return static_cast<uid_t>(value);
}

std::vector<char> passwd_buffer() {
  const long size = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  return std::vector<char>(size > 0 ? static_cast<std::size_t>(size) : 16384);
}

std::optional<uid_t> uid_of_user(const std::string& name) {
  std::vector<char> buffer = passwd_buffer();
  passwd entry{};
  passwd* found = nullptr;
  if (::getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) {
    return std::nullopt;
  }
  return found->pw_uid;
}

std::string name_of_uid(uid_t uid) {
  std::vector<char> buffer = passwd_buffer();
  passwd entry{};
  passwd* found = nullptr;
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) return {};
  return found->pw_name;
}

std::string owner_text(uid_t uid) {
  const std::string name = name_of_uid(uid);
  return "uid " + std::to_string(uid) + (name.empty() ? "" : " (" + name + ")");
}

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

std::vector<std::string> components(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = path.find('/', start);
    const std::size_t end = slash == std::string_view::npos ? path.size() : slash;
    if (end > start) parts.emplace_back(path.substr(start, end - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return parts;
}

std::string parent_of(const std::string& dir) {
  const std::size_t slash = dir.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : dir.substr(0, slash);
}

std::string child_of(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

common::Error unreachable(const std::string& socket_path, const std::string& why) {
  return make_error(ErrorCode::unavailable, "cannot connect to jitcached at " + socket_path + ": " + why);
}

common::Error untrusted(const std::string& socket_path, const std::string& why, const DaemonTrust& trust) {
  return make_error(ErrorCode::unavailable,
                    "the socket " + socket_path + " is not trusted: " + why +
                        "; a daemon is used only when the socket's whole path and the process listening on it belong "
                        "to " +
                        trust.describe() + " (" + k_daemon_user_variable +
                        " names the daemon's user; docs/security.md \"Whom the client trusts\")");
}

// Rules 1 and 2 for one entry on the way: why it breaks them, or nothing.
std::optional<std::string> broken_rule(const std::string& entry, const struct stat& st, const DaemonTrust& trust) {
  if (!trust.trusts(st.st_uid)) return entry + " is owned by " + owner_text(st.st_uid);
  const bool others_write = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  if (S_ISDIR(st.st_mode) && others_write && (st.st_mode & S_ISVTX) == 0) {
    return entry + " may be written by " + ((st.st_mode & S_IWOTH) ? "everyone" : "its group") + " (mode " +
           mode_text(st.st_mode) + ", not sticky), who could put another socket in its place";
  }
  return std::nullopt;
}

}  // namespace

DaemonTrust DaemonTrust::callers_own() {
  DaemonTrust trust;
  // The effective uid: a set-user-ID program runs with its owner's rights, and a daemon of the user
  // who started it must not serve code into it.
  const uid_t me = ::geteuid();
  if (me == 0) {
    trust.m_parties.push_back({0, true, "root"});
  } else {
    trust.m_parties.push_back({me, true, "you (uid " + std::to_string(me) + ")"});
    trust.m_parties.push_back({0, true, "root"});
  }
  return trust;
}

DaemonTrust DaemonTrust::with_daemon_users(std::string_view daemon_users) {
  DaemonTrust trust = callers_own();
  auto names = std::make_shared<Names>();
  std::string token;
  auto add = [&] {
    if (token.empty()) return;
    if (auto uid = parse_uid(token)) {
      trust.m_parties.push_back({*uid, true, "uid " + token});
    } else {
      names->names.push_back(token);
    }
    token.clear();
  };
  for (char c : daemon_users) {
    if (c == ',' || c == ' ' || c == '\t') {
      add();
    } else {
      token += c;
    }
  }
  add();
  if (!names->names.empty()) trust.m_names = std::move(names);
  return trust;
}

const std::vector<DaemonTrust::Party>& DaemonTrust::named_parties() const {
  std::call_once(m_names->looked_up, [names = m_names.get()] {
    for (const std::string& name : names->names) {
      if (auto uid = uid_of_user(name)) {
        names->parties.push_back({*uid, true, name + " (uid " + std::to_string(*uid) + ")"});
      } else {
        names->parties.push_back({0, false, name + " (no such user here)"});
      }
    }
  });
  return m_names->parties;
}

DaemonTrust DaemonTrust::from_environment() {
  return with_daemon_users(common::client_env(k_daemon_user_variable).value_or(k_default_daemon_user));
}

DaemonTrust DaemonTrust::only(std::vector<uid_t> uids) {
  DaemonTrust trust;
  for (uid_t uid : uids) trust.m_parties.push_back({uid, true, "uid " + std::to_string(uid)});
  return trust;
}

bool DaemonTrust::trusts(uid_t uid) const {
  auto among = [uid](const std::vector<Party>& parties) {
    for (const Party& party : parties) {
      if (party.resolved && party.uid == uid) return true;
    }
    return false;
  };
  return among(m_parties) || (m_names != nullptr && among(named_parties()));
}

std::string DaemonTrust::describe() const {
  std::string text;
  for (const Party& party : m_parties) text += (text.empty() ? "" : ", ") + party.label;
  if (m_names != nullptr) {
    for (const Party& party : named_parties()) text += (text.empty() ? "" : ", ") + party.label;
  }
  return text.empty() ? "no one" : text;
}

common::Result<uid_t> check_socket_path(const std::string& socket_path, const DaemonTrust& trust) {
  if (socket_path.empty()) return unreachable(socket_path, std::strerror(ENOENT));
  std::string path = socket_path;
  if (path.front() != '/') {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof(cwd)) == nullptr) return unreachable(socket_path, std::strerror(errno));
    path = std::string(cwd) + "/" + path;
  }
  const std::vector<std::string> parts = components(path);
  std::deque<std::string> pending(parts.begin(), parts.end());
  std::string dir = "/";  // the directory reached so far, every entry on the way to it checked
  struct stat st {};
  if (::lstat("/", &st) != 0) return unreachable(socket_path, std::strerror(errno));
  if (auto broken = broken_rule("/", st, trust)) return untrusted(socket_path, *broken, trust);
  int links = 0;
  while (!pending.empty()) {
    const std::string name = std::move(pending.front());
    pending.pop_front();
    if (name == ".") continue;
    // The parent of a checked directory is a prefix of it, checked before it.
    if (name == "..") {
      dir = parent_of(dir);
      continue;
    }
    const std::string entry = child_of(dir, name);
    if (::lstat(entry.c_str(), &st) != 0) {
      // The directory reached so far refuses this process: the socket may well be there (the
      // system socket's directory is its group's alone), so say who may pass, not "missing".
      if (errno == EACCES) return unreachable(socket_path, permission_denied_text(dir));
      return unreachable(socket_path, std::strerror(errno));
    }
    if (auto broken = broken_rule(entry, st, trust)) return untrusted(socket_path, *broken, trust);
    if (S_ISLNK(st.st_mode)) {
      if (++links > k_max_links) return unreachable(socket_path, std::strerror(ELOOP));
      char target[PATH_MAX];
      const ssize_t length = ::readlink(entry.c_str(), target, sizeof(target));
      if (length <= 0 || static_cast<std::size_t>(length) >= sizeof(target)) {
        return unreachable(socket_path, "cannot read the link " + entry);
      }
      const std::string_view link(target, static_cast<std::size_t>(length));
      const std::vector<std::string> inserted = components(link);
      pending.insert(pending.begin(), inserted.begin(), inserted.end());
      if (link.front() == '/') dir = "/";
      continue;
    }
    if (pending.empty()) {
      if (!S_ISSOCK(st.st_mode)) return unreachable(socket_path, entry + " is not a socket");
      return st.st_uid;
    }
    if (!S_ISDIR(st.st_mode)) return unreachable(socket_path, std::strerror(ENOTDIR));
    dir = entry;
  }
  return unreachable(socket_path, dir + " is a directory, not a socket");
}

common::Result<void> check_peer(int connected_socket, const std::string& socket_path, const DaemonTrust& trust) {
  ucred peer{};
  socklen_t length = sizeof(peer);
  if (::getsockopt(connected_socket, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0) {
    return make_error(ErrorCode::unavailable,
                      "cannot learn who listens on " + socket_path + " (SO_PEERCRED): " + std::strerror(errno));
  }
  if (!trust.trusts(peer.uid)) {
    return untrusted(socket_path,
                     "the process listening on it (pid " + std::to_string(peer.pid) + ") runs as " +
                         owner_text(peer.uid),
                     trust);
  }
  return {};
}

}  // namespace jitcache::client::transport
