// `jitcache doctor`'s checks of the way to the daemon: the socket (which one, found, owner and
// mode), whether the client would use it (transport/daemon_trust.hpp), the daemon behind it (HELLO,
// STATS), and the published directory beside it. Nothing is sent to a socket the client would not
// trust: the daemon checks run only after the trust check passed, as libjitcache's loads do.
#include <client/cli/doctor_checks.hpp>

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <client/cli/format.hpp>
#include <client/src/transport/socket_access.hpp>
#include <common/unique_fd.hpp>
#include <proto/published_image.hpp>
#include <proto/wire.hpp>

#ifndef JITCACHE_VERSION
#define JITCACHE_VERSION "unknown"
#endif

namespace jitcache::client::cli {

namespace {

// Rationale: as the other commands (daemon_session.cpp): a busy daemon may queue a connection
// briefly, a dead one should be reported at once.
constexpr std::chrono::milliseconds k_connect_timeout{2000};
constexpr std::chrono::milliseconds k_io_timeout{10000};
// As daemon_session.cpp's: a socket systemd holds while no daemon serves it is told in 5 s.
constexpr std::chrono::milliseconds k_first_reply_timeout{5000};

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

std::string user_text(uid_t uid) {
  const passwd* user = ::getpwuid(uid);
  if (user == nullptr) return "uid " + std::to_string(uid);
  return std::string(user->pw_name) + " (uid " + std::to_string(uid) + ")";
}

std::string group_text(gid_t gid) {
  const group* entry = ::getgrgid(gid);
  if (entry == nullptr) return "gid " + std::to_string(gid);
  return std::string(entry->gr_name) + " (gid " + std::to_string(gid) + ")";
}

std::string kind_of(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a named pipe";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a socket";
}

std::string source_text(const DoctorContext& context) {
  if (context.socket_source == "default") return "the default socket";
  if (context.socket_source == "--socket" || context.socket_source == "JITCACHE_SOCKET") {
    return "named by " + context.socket_source;
  }
  return "named by the `socket` key of " + context.socket_source;
}

std::string start_daemon_fix(const DoctorContext& context) {
  const std::string start =
      "start jitcached: `systemctl start jitcached.socket` for the system service, or `jitcached` for a daemon "
      "of your own (docs/operations.md \"Running the daemon\")";
  if (context.socket_source == "default") return start + "; if your daemon listens elsewhere, set JITCACHE_SOCKET";
  return start + " on this socket, or correct " + context.socket_source;
}

// Whether a connect(2) to `path` is refused: a socket file nothing listens on. Only for a path that
// passed the trust rule: a connection sends no byte, but an untrusted socket sees not even that.
bool connection_refused(const std::string& path) {
  sockaddr_un address{};
  if (path.size() >= sizeof(address.sun_path)) return false;
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  common::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return false;
  return ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0 &&
         errno == ECONNREFUSED;
}

// What a daemon without each capability bit cannot do, for the ones a client of this version uses.
// Compiling is the compile worker's check, and REMOTE_CHECK the remote tier's.
struct CapabilityMeaning {
  std::uint64_t bit;
  const char* without;
};
constexpr CapabilityMeaning k_capability_meanings[] = {
    {proto::k_capability_store, "nothing is cached"},
    {proto::k_capability_report_failure, "an image that fails to load cannot be quarantined for everyone"},
    {proto::k_capability_gc, "`jitcache gc` is not available"},
    {proto::k_capability_fast_key, "every load costs a second round trip"},
    {proto::k_capability_image_fd, "large images come through the socket as bytes, not as a descriptor"},
    {proto::k_capability_verify, "`jitcache verify` is not available"},
    {proto::k_capability_hit_note, "no published directory: every hit goes through the socket"},
};

std::string capability_names(std::uint64_t capabilities) {
  std::string names;
  for (const auto& capability : proto::k_capabilities) {
    if ((capabilities & capability.value) == 0) continue;
    names += (names.empty() ? "" : ", ") + std::string(capability.name);
  }
  return names.empty() ? "none" : names;
}

}  // namespace

std::optional<std::uint64_t> DoctorContext::figure(const std::string& name) const {
  if (!stats) return std::nullopt;
  const auto found = stats->find(name);
  if (found == stats->end()) return std::nullopt;
  return found->second;
}

Finding check_socket(DoctorContext& context) {
  const std::string& path = context.socket_path;
  std::string where = path + " (" + source_text(context) + ")";
  if (!context.other_commands_use.empty()) {
    where += "; the other jitcache commands use " + context.other_commands_use +
             " unless given --socket, as they do not read the config file";
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    const int error = errno;
    // A directory on the way that refuses this user (the system socket's is its group's alone): the
    // socket may well be there, so name the directory and the group to join, not a daemon to start.
    const std::string parent = path.substr(0, path.find_last_of('/') == 0 ? 1 : path.find_last_of('/'));
    Finding finding("socket", Severity::error,
                    error == ENOENT   ? "no socket at " + where
                    : error == EACCES ? where + " cannot be looked at: " + transport::permission_denied_text(parent)
                                      : where + " cannot be looked at: " + std::strerror(error),
                    error == ENOENT ? start_daemon_fix(context)
                                    : "run as a user who may reach the socket: join the group that may enter its "
                                      "directory (jitcached's socket_group, or jitcached.socket's SocketGroup=: "
                                      "docs/operations.md \"Running the daemon\")");
    finding.details = Json{{"path", path}, {"source", context.socket_source}, {"exists", false}};
    return finding;
  }
  if (S_ISLNK(st.st_mode) && ::stat(path.c_str(), &st) != 0) {
    Finding finding("socket", Severity::error, where + " is a symbolic link to nothing: " + std::strerror(errno),
                    start_daemon_fix(context));
    finding.details = Json{{"path", path}, {"source", context.socket_source}, {"exists", false}};
    return finding;
  }
  context.socket_exists = true;
  Json details{{"path", path},           {"source", context.socket_source}, {"exists", true},
               {"owner_uid", st.st_uid}, {"group_gid", st.st_gid},          {"mode", mode_text(st.st_mode)}};
  if (!S_ISSOCK(st.st_mode)) {
    Finding finding("socket", Severity::error, where + " is " + kind_of(st.st_mode) + ", not a socket",
                    "remove it and start jitcached, which makes its socket there; or point JITCACHE_SOCKET at the "
                    "socket your daemon listens on");
    finding.details = std::move(details);
    return finding;
  }
  std::string message = where + ": a socket owned by " + user_text(st.st_uid) + ", group " + group_text(st.st_gid) +
                        ", mode " + mode_text(st.st_mode);
  Finding finding("socket", Severity::ok, message);
  // Rationale: connecting needs write permission on the socket, so a socket others may write is
  // one every local user may use: its compile slots, its quotas, its daemon's attention. jitcached
  // makes its own 0660 (docs/security.md), so this mode was set by hand or by a socket unit.
  if ((st.st_mode & S_IWOTH) != 0) {
    finding.severity = Severity::warning;
    finding.message += ": every user of this host may connect to it";
    finding.fix =
        "make it 0660 with the group of the daemon's users: restart jitcached (it makes its socket 0660, group "
        "socket_group), or under systemd set SocketMode=0660 and SocketGroup= in jitcached.socket; then find who "
        "changed it";
  }
  finding.details = std::move(details);
  return finding;
}

Finding check_socket_trust(DoctorContext& context) {
  auto owner = transport::check_socket_path(context.socket_path, context.trust);
  if (!owner) {
    const std::string& why = owner.error().message;
    // Rationale: a directory others may write is fixed by its owner; an owner the client does not
    // trust is either an attacker's socket or a daemon user nobody named.
    std::string fix =
        why.find("may be written by") != std::string::npos
            ? "make every directory on the socket's path writable by its owner only (chmod go-w), or move the socket "
              "to a directory that is (docs/security.md \"Whom the client trusts\")"
            : "if that uid runs no daemon of yours, someone planted this socket: remove it (and the directory it made) "
              "and start your own jitcached; if it is your daemon's user (a sidecar, a service account), name it in "
              "JITCACHE_DAEMON_USER where programs run (docs/security.md \"Whom the client trusts\")";
    Finding finding("socket_trust", Severity::error, why + "; libjitcache loads without the cache", std::move(fix));
    finding.details = Json{{"trusted", false}, {"trusts", context.trust.describe()}};
    return finding;
  }
  context.socket_owner = *owner;
  Finding finding("socket_trust", Severity::ok,
                  "its path and owner pass the client's rule (it trusts " + context.trust.describe() + ")");
  finding.details = Json{{"trusted", true}, {"trusts", context.trust.describe()}, {"owner_uid", *owner}};
  return finding;
}

Finding check_daemon(DoctorContext& context) {
  transport::ConnectOptions options;
  options.socket_path = context.socket_path;
  options.connect_timeout = k_connect_timeout;
  options.io_timeout = k_io_timeout;
  options.first_reply_timeout = k_first_reply_timeout;
  options.trust = context.trust;
  auto client = transport::DaemonClient::connect(options);
  if (!client) {
    if (connection_refused(context.socket_path)) {
      return Finding("daemon", Severity::error,
                     "nothing listens on " + context.socket_path +
                         ": the socket file is stale, left by a daemon that is gone",
                     "start jitcached again, which replaces the stale file: `systemctl start jitcached.socket` for "
                     "the system service, or `jitcached` for a daemon of your own");
    }
    if (client.error().message.find(std::strerror(EACCES)) != std::string::npos) {
      return Finding("daemon", Severity::error, client.error().message,
                     "the daemon may well be running: this user may not reach its socket (the message says "
                     "which group to join)");
    }
    return Finding("daemon", Severity::error, client.error().message,
                   "check that jitcached runs (`systemctl status jitcached`, or its log in the state directory)");
  }
  context.client.emplace(std::move(*client));
  auto hello = context.client->hello("jitcache-doctor");
  if (!hello) {
    context.client.reset();
    return Finding("daemon", Severity::error,
                   "jitcached at " + context.socket_path + " did not answer HELLO: " + hello.error().message,
                   hello.error().message.find("systemd holds the socket") != std::string::npos
                       ? "restarting cannot help a service that fails at every start: `systemctl status jitcached` "
                         "and `journalctl -u jitcached -n 20` say why it fails; fix that, and the next restart "
                         "serves the waiting connections"
                       : "look at jitcached's log; a daemon that answers nothing should be restarted");
  }
  context.hello = *hello;
  Json details{{"version", hello->daemon_version},
               {"protocol_version", hello->version},
               {"capabilities", hello->capabilities},
               {"capability_names", capability_names(hello->capabilities)}};
  std::string message = hello->daemon_version + " answers: protocol " + std::to_string(hello->version) +
                        ", capabilities " + capability_names(hello->capabilities);
  if (!hello->daemon_version.ends_with(JITCACHE_VERSION)) {
    message += std::string(" (this jitcache is ") + JITCACHE_VERSION + ")";
  }
  Finding finding("daemon", Severity::ok, std::move(message));
  std::string missing;
  for (const CapabilityMeaning& meaning : k_capability_meanings) {
    if ((hello->capabilities & meaning.bit) != 0) continue;
    std::string name = "bit " + std::to_string(__builtin_ctzll(meaning.bit));
    for (const auto& capability : proto::k_capabilities) {
      if (capability.value == meaning.bit) name = capability.name;
    }
    missing += (missing.empty() ? "" : "; ") + name + ": " + meaning.without;
  }
  if (!missing.empty()) {
    finding.severity = Severity::warning;
    finding.message += "; without " + missing;
    finding.fix = std::string("this jitcached is older than the client (jitcache ") + JITCACHE_VERSION +
                  "): upgrade it and restart it";
  }
  auto stats = context.client->stats();
  if (!stats) {
    finding.severity = Severity::warning;
    finding.message += "; STATS failed: " + stats.error().message;
    if (finding.fix.empty()) finding.fix = "look at jitcached's log: the checks that need its figures were skipped";
  } else {
    std::map<std::string, std::uint64_t> figures;
    for (const auto& [name, value] : stats->values) figures.emplace(name, value);
    context.stats = std::move(figures);
  }
  finding.details = std::move(details);
  return finding;
}

Finding check_published(const DoctorContext& context) {
  const std::string dir = proto::published_dir_for(context.socket_path);
  const auto publishing = context.figure("publishing");
  if (publishing && *publishing == 0) {
    Finding finding("published", Severity::ok,
                    "off: jitcached keeps no published directory (publish = false, or it could not make " + dir +
                        ": its log says which); every hit goes through the socket");
    finding.details = Json{{"path", dir}, {"publishing", false}};
    return finding;
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    const int error = errno;
    if (error == ENOENT && !publishing) {
      return Finding("published", Severity::ok, "none at " + dir + ": every hit goes through the socket");
    }
    Finding finding("published", Severity::warning,
                    dir + " cannot be looked at although jitcached publishes: " + std::strerror(error),
                    "restart jitcached, which makes the directory afresh beside its socket");
    finding.details = Json{{"path", dir}, {"publishing", true}, {"exists", false}};
    return finding;
  }
  Json details{{"path", dir},
               {"publishing", true},
               {"exists", true},
               {"owner_uid", st.st_uid},
               {"group_gid", st.st_gid},
               {"mode", mode_text(st.st_mode)}};
  const std::string described = dir + ": owned by " + user_text(st.st_uid) + ", group " + group_text(st.st_gid) +
                                ", mode " + mode_text(st.st_mode);
  const bool owner_ok = context.socket_owner && (st.st_uid == *context.socket_owner || st.st_uid == 0);
  if (!S_ISDIR(st.st_mode) || !owner_ok || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    Finding finding("published", Severity::error,
                    described +
                        ": libjitcache reads only a directory the socket's owner or root owns and nobody "
                        "else may write, so it reads none of it",
                    "remove it and restart jitcached: it makes the directory afresh, mode 0750, owned by its user");
    finding.details = std::move(details);
    return finding;
  }
  const common::UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int error = errno;
    Finding finding("published", Severity::warning,
                    described + ": this user (uid " + std::to_string(::geteuid()) +
                        ") cannot read it: " + std::strerror(error) + "; its hits go through the socket",
                    "add the user to the socket's group (jitcached's socket_group), which the directory shares");
    details["readable"] = false;
    finding.details = std::move(details);
    return finding;
  }
  details["readable"] = true;
  std::string message = described + ", readable";
  if (const auto images = context.figure("published_images")) {
    message += "; " + std::to_string(*images) + " images published (" +
               human_bytes(context.figure("published_bytes").value_or(0)) + ")";
    details["images"] = *images;
  }
  Finding finding("published", Severity::ok, std::move(message));
  finding.details = std::move(details);
  return finding;
}

}  // namespace jitcache::client::cli
