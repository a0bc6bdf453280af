// Why this process may not reach a socket that is there, or gets no answer on it: the text a "Permission denied" on the
// way to it gets, naming the directory or socket that refuses, its group and mode, and the group to join. The system
// socket (/run/jitcache/jitcached.sock) lives in a directory only its group may search
// (packaging/systemd/jitcached.socket, DirectoryMode=0750), so a user outside that group sees EACCES
// there, not ENOENT; saying "missing" or "start jitcached" would send them the wrong way.
// Thread safety: pure functions over the file system and the group database.
#pragma once

#include <optional>
#include <string>

namespace jitcache::client::transport {

// True when `path` cannot be looked at because a directory on the way refuses this process
// (lstat fails with EACCES): the socket may well be there.
bool blocked_by_permissions(const std::string& path);

// "Permission denied: /run/jitcache is group jitcache's (mode 0750) and uid 1000 is not in that
// group; add the user to it (`usermod -aG jitcache USER`, then log in again)". `refusing` is the
// directory whose search was refused, or the socket whose connect was refused.
std::string permission_denied_text(const std::string& refusing);

// A connection's first reply did not come: `what` says how ("no answer within 5.0 s", "the
// connection was closed before an answer"). When the process listening on the socket is PID 1
// (SO_PEERCRED reports listen(2)'s caller: systemd, for a socket-activated daemon, running or not),
// no daemon is serving it: the text says so and names `systemctl status jitcached` and `journalctl -u
// jitcached`, since restarting cannot help a service that fails at every start. Nullopt when the
// listener is not PID 1 (the caller keeps its own message).
std::optional<std::string> held_by_service_manager_text(int connected_socket, const std::string& socket_path,
                                                        const std::string& what);

}  // namespace jitcache::client::transport
