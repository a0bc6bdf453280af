// Whom the client lets serve it code, decided before a byte goes to a daemon's socket and before a
// byte of the published directory beside it is read (docs/security.md "Whom the client trusts"):
// whoever answers on the socket, or owns that directory, chooses the images the program loads.
//
// The rule, for a socket path P and the trusted uids (DaemonTrust: the caller, root, and the system
// daemon's users):
//  1. Every entry the kernel follows to reach P, from "/" down — each directory, each symbolic link
//     (followed, at most 40) and the socket itself — is owned by a trusted uid.
//  2. No directory on the way grants write to its group or to others (its mode bits; an ACL that
//     lets anyone else write shows in the group bits), unless it has the sticky bit (/tmp): there
//     others may add entries but not rename or remove another's, and rule 1 has already required the
//     entry the path takes through it to be a trusted uid's.
//  3. P is a socket, and once connected the process listening on it is trusted: SO_PEERCRED gives
//     the uid that called listen(2), which for a socket systemd made is root.
// Rules 1 and 2 apply however P was chosen (a default, JITCACHE_SOCKET, a config file, --socket):
// a path through a directory another uid may change can be pointed elsewhere after any check.
// Thread safety: DaemonTrust is a value; the functions only read the file system and the socket.
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <common/result.hpp>

namespace jitcache::client::transport {

// The variable that names the system daemon's users, and its value when unset: the user the Debian
// package runs jitcached as (packaging/systemd/jitcache.sysusers).
inline constexpr const char* k_daemon_user_variable = "JITCACHE_DAEMON_USER";
inline constexpr const char* k_default_daemon_user = "jitcache";

class DaemonTrust {
 public:
  // The caller and root only.
  static DaemonTrust callers_own();
  // The caller, root, and each user in `daemon_users`: names or numeric uids separated by commas or
  // spaces ("jitcache", "10001", "jitcache,10001"). A name that is no user here trusts no one and is
  // named in describe(). Rationale: names are looked up (getpwnam) only when a uid that is neither
  // the caller's nor root's is met, once per DaemonTrust and its copies: the lookup of a user that
  // does not exist took 0.25-0.4 ms on the dev VM (nsswitch "files systemd"), which every process's
  // first load would otherwise pay, though a user's own daemon or a root-owned path never needs it.
  static DaemonTrust with_daemon_users(std::string_view daemon_users);
  // with_daemon_users($JITCACHE_DAEMON_USER), or of k_default_daemon_user when it is unset or empty.
  static DaemonTrust from_environment();
  // Exactly these uids, for tests of the rule itself.
  static DaemonTrust only(std::vector<uid_t> uids);

  bool trusts(uid_t uid) const;
  // Whom it trusts, for messages: "you (uid 1000), root, jitcache (uid 998)".
  std::string describe() const;

 private:
  struct Party {
    uid_t uid = 0;
    bool resolved = true;  // false: a name that is no user here
    std::string label;
  };
  // The names of with_daemon_users(), looked up on first need; shared by copies, so a lookup done
  // for one connection serves the next. Thread safety: std::call_once.
  struct Names {
    std::vector<std::string> names;
    std::once_flag looked_up;
    std::vector<Party> parties;
  };
  const std::vector<Party>& named_parties() const;

  std::vector<Party> m_parties;
  std::shared_ptr<Names> m_names;
};

// Rules 1 to 3 on the file system: the socket's owner when P may be used. An entry that cannot be
// looked at (missing, no search permission) fails as connect(2) would, "cannot connect to jitcached
// at P: No such file or directory"; a path that breaks the rule fails with "the socket P is not
// trusted: …", naming the entry and its owner or mode. Both are ErrorCode::unavailable: a daemon
// that may not be used is, to the caller, a daemon that is not there.
common::Result<uid_t> check_socket_path(const std::string& socket_path, const DaemonTrust& trust);

// Rule 3 on a connected socket: ok when the process listening on it runs as a trusted uid.
common::Result<void> check_peer(int connected_socket, const std::string& socket_path, const DaemonTrust& trust);

}  // namespace jitcache::client::transport
