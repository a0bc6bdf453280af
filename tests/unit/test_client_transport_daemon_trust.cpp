// The client's rule for whom it trusts (client/src/transport/daemon_trust.hpp, docs/security.md
// "Whom the client trusts"): every entry on the way to the socket owned by a trusted uid, no
// directory on the way writable by others unless sticky, the listening process a trusted uid; and
// the default socket's choice falling through an untrusted user socket to the system socket.
// The cases that need another uid's files (chown) run as root, as CI does, and skip visibly otherwise.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include <client/src/transport/daemon_trust.hpp>
#include <client/src/transport/default_socket.hpp>
#include <client/src/transport/unix_connection.hpp>
#include <common/unique_fd.hpp>

#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

using namespace jitcache;
using client::transport::check_socket_path;
using client::transport::choose_default_socket;
using client::transport::DaemonTrust;
using testing::TempDir;

namespace {

// A uid no test user has: what "another uid" owns here.
constexpr uid_t k_other_uid = 4242;

// A socket bound at `path` and listening (by this process), so that connect(2) reaches it.
common::UniqueFd listen_at(const std::string& path) {
  common::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  REQUIRE(fd.get() >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  REQUIRE(path.size() < sizeof(addr.sun_path));
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  REQUIRE(::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  REQUIRE(::listen(fd.get(), 8) == 0);
  return fd;
}

// A directory with exactly `mode` (mkdir's is masked by the umask).
std::string make_dir(const std::string& path, mode_t mode) {
  REQUIRE(::mkdir(path.c_str(), 0700) == 0);
  REQUIRE(::chmod(path.c_str(), mode) == 0);
  return path;
}

std::string refusal(const std::string& socket_path, const DaemonTrust& trust = DaemonTrust::callers_own()) {
  auto checked = check_socket_path(socket_path, trust);
  REQUIRE_FALSE(checked);
  CHECK(checked.error().code == common::ErrorCode::unavailable);
  return checked.error().message;
}

bool root() { return ::geteuid() == 0; }

}  // namespace

TEST_CASE(
    "daemon trust: a socket whose whole path only trusted uids can change is trusted, and its owner is returned") {
  TempDir dir("jitcache-trust");
  const std::string sub = make_dir(dir.file("run"), 0750);
  auto listening = listen_at(sub + "/jitcached.sock");
  auto checked = check_socket_path(sub + "/jitcached.sock", DaemonTrust::callers_own());
  INFO((checked ? std::string() : checked.error().message));
  REQUIRE(checked);
  CHECK(*checked == ::geteuid());
  // "." and ".." are walked as the kernel walks them.
  CHECK(check_socket_path(sub + "/./../run/jitcached.sock", DaemonTrust::callers_own()));
}

TEST_CASE("daemon trust: a group-writable directory on the path is not trusted") {
  TempDir dir("jitcache-trust");
  const std::string shared = make_dir(dir.file("shared"), 0770);
  const std::string inner = make_dir(shared + "/jitcache", 0750);
  auto listening = listen_at(inner + "/jitcached.sock");
  const std::string why = refusal(inner + "/jitcached.sock");
  CHECK_THAT(why, Catch::Contains(shared + " may be written by its group (mode 0770, not sticky)"));
  CHECK_THAT(why, Catch::Contains("the socket " + inner + "/jitcached.sock is not trusted"));
  CHECK_THAT(why, Catch::Contains("JITCACHE_DAEMON_USER"));
}

TEST_CASE("daemon trust: a world-writable directory without the sticky bit is not trusted, even as the socket's own") {
  TempDir dir("jitcache-trust");
  // An emptyDir volume's root (0777, or 2777 with an fsGroup).
  const std::string volume = make_dir(dir.file("volume"), 02777);
  auto listening = listen_at(volume + "/jitcached.sock");
  CHECK_THAT(refusal(volume + "/jitcached.sock"),
             Catch::Contains(volume + " may be written by everyone (mode 2777, not sticky)"));
  const std::string inner = make_dir(volume + "/jitcache", 0750);
  auto inner_listening = listen_at(inner + "/jitcached.sock");
  CHECK_THAT(refusal(inner + "/jitcached.sock"), Catch::Contains(volume + " may be written by everyone"));
}

TEST_CASE("daemon trust: a sticky world-writable directory passes only through an entry a trusted uid owns") {
  TempDir dir("jitcache-trust");
  const std::string tmp = make_dir(dir.file("tmp"), 01777);
  const std::string mine = make_dir(tmp + "/jitcache-mine", 0700);
  auto listening = listen_at(mine + "/jitcached.sock");
  CHECK(check_socket_path(mine + "/jitcached.sock", DaemonTrust::callers_own()));
  // The socket straight in the sticky directory: others cannot remove or rename it.
  auto direct = listen_at(tmp + "/jitcached.sock");
  CHECK(check_socket_path(tmp + "/jitcached.sock", DaemonTrust::callers_own()));
  if (!root()) {
    JITCACHE_SKIP("the foreign-owned half: chown to another uid needs root (CI runs as root)");
  }
  // What another uid plants in /tmp: its own directory, and its own socket in ours.
  const std::string planted = make_dir(tmp + "/jitcache-planted", 0755);
  auto planted_listening = listen_at(planted + "/jitcached.sock");
  REQUIRE(::chown(planted.c_str(), k_other_uid, k_other_uid) == 0);
  CHECK_THAT(refusal(planted + "/jitcached.sock"), Catch::Contains(planted + " is owned by uid 4242"));
  REQUIRE(::chown((tmp + "/jitcached.sock").c_str(), k_other_uid, k_other_uid) == 0);
  CHECK_THAT(refusal(tmp + "/jitcached.sock"), Catch::Contains(tmp + "/jitcached.sock is owned by uid 4242"));
  // A sticky directory owned by another uid is that uid's to change.
  const std::string foreign_tmp = make_dir(dir.file("foreign_tmp"), 01777);
  const std::string inside = make_dir(foreign_tmp + "/d", 0700);
  auto inside_listening = listen_at(inside + "/jitcached.sock");
  REQUIRE(::chown(foreign_tmp.c_str(), k_other_uid, k_other_uid) == 0);
  CHECK_THAT(refusal(inside + "/jitcached.sock"), Catch::Contains(foreign_tmp + " is owned by uid 4242"));
}

TEST_CASE("daemon trust: symbolic links on the path are followed, and the link and its target are both checked") {
  TempDir dir("jitcache-trust");
  const std::string real = make_dir(dir.file("real"), 0750);
  auto listening = listen_at(real + "/jitcached.sock");
  // A trusted link to a trusted place, as /var/run -> /run is.
  REQUIRE(::symlink(real.c_str(), dir.file("link").c_str()) == 0);
  CHECK(check_socket_path(dir.file("link") + "/jitcached.sock", DaemonTrust::callers_own()));
  REQUIRE(::symlink("real/jitcached.sock", dir.file("socket_link").c_str()) == 0);
  auto through_link = check_socket_path(dir.file("socket_link"), DaemonTrust::callers_own());
  REQUIRE(through_link);
  CHECK(*through_link == ::geteuid());

  // A link into a world-writable directory: the target's path is held to the rule too.
  const std::string open = make_dir(dir.file("open"), 0777);
  const std::string behind = make_dir(open + "/d", 0700);
  auto behind_listening = listen_at(behind + "/jitcached.sock");
  REQUIRE(::symlink(behind.c_str(), dir.file("to_open").c_str()) == 0);
  CHECK_THAT(refusal(dir.file("to_open") + "/jitcached.sock"), Catch::Contains(open + " may be written by everyone"));

  // A link to itself ends as the kernel ends it.
  REQUIRE(::symlink("loop", dir.file("loop").c_str()) == 0);
  CHECK_THAT(refusal(dir.file("loop")), Catch::Contains("Too many levels of symbolic links"));

  if (!root()) {
    JITCACHE_SKIP("the foreign-owned link: lchown to another uid needs root (CI runs as root)");
  }
  // Another uid's link in a sticky directory: it chose where the path leads.
  const std::string tmp = make_dir(dir.file("tmp"), 01777);
  REQUIRE(::symlink(real.c_str(), (tmp + "/jitcache-link").c_str()) == 0);
  REQUIRE(::lchown((tmp + "/jitcache-link").c_str(), k_other_uid, k_other_uid) == 0);
  CHECK_THAT(refusal(tmp + "/jitcache-link/jitcached.sock"),
             Catch::Contains(tmp + "/jitcache-link is owned by uid 4242"));
}

TEST_CASE("daemon trust: what is missing or not a socket fails as connect would, naming the path") {
  TempDir dir("jitcache-trust");
  CHECK(refusal(dir.file("absent.sock")) ==
        "cannot connect to jitcached at " + dir.file("absent.sock") + ": No such file or directory");
  testing::write_file(dir.file("plain"), "not a socket");
  CHECK_THAT(refusal(dir.file("plain")), Catch::Contains(dir.file("plain") + " is not a socket"));
  CHECK_THAT(refusal(dir.file("plain") + "/jitcached.sock"), Catch::Contains("Not a directory"));
  CHECK_THAT(refusal(dir.path()), Catch::Contains(dir.path() + " is not a socket"));
  CHECK_THAT(refusal(dir.path() + "/.."), Catch::Contains("is a directory, not a socket"));
}

TEST_CASE("daemon trust: JITCACHE_DAEMON_USER's names and uids are trusted besides the caller and root") {
  const DaemonTrust own = DaemonTrust::callers_own();
  CHECK(own.trusts(::geteuid()));
  CHECK(own.trusts(0));
  CHECK_FALSE(own.trusts(k_other_uid));

  const DaemonTrust configured = DaemonTrust::with_daemon_users("root, 4242,jitcache-no-such-user-here");
  CHECK(configured.trusts(k_other_uid));
  CHECK(configured.trusts(0));
  CHECK(configured.trusts(::geteuid()));
  CHECK_FALSE(configured.trusts(4243));
  CHECK_THAT(configured.describe(), Catch::Contains("uid 4242"));
  CHECK_THAT(configured.describe(), Catch::Contains("root (uid 0)"));
  CHECK_THAT(configured.describe(), Catch::Contains("jitcache-no-such-user-here (no such user here)"));
  // Not a uid: "-1" is no one's, a number too large for uid_t neither; both are looked up as names.
  const DaemonTrust odd = DaemonTrust::with_daemon_users("-1 4294967295 99999999999");
  CHECK_FALSE(odd.trusts(static_cast<uid_t>(-1)));
  CHECK_THAT(odd.describe(), Catch::Contains("99999999999 (no such user here)"));
  CHECK_FALSE(DaemonTrust::only({}).trusts(0));
}

TEST_CASE(
    "daemon trust: a process of an untrusted uid listening on a socket a trusted uid made is refused before a byte is sent") {
  if (!root()) {
    JITCACHE_SKIP("listening as another uid needs root (CI runs as root)");
  }
  TempDir dir("jitcache-trust");
  const std::string path = dir.file("jitcached.sock");
  // Bound by root (the file and its directory are root's), listened on as another uid: SO_PEERCRED
  // reports the credentials of listen(2)'s caller, as it reports root's for a socket systemd made.
  common::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  REQUIRE(::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  REQUIRE(::seteuid(k_other_uid) == 0);
  const int listened = ::listen(fd.get(), 8);
  REQUIRE(::seteuid(0) == 0);
  REQUIRE(listened == 0);
  REQUIRE(check_socket_path(path, DaemonTrust::callers_own()));

  client::transport::ConnectOptions options;
  options.socket_path = path;
  auto refused = client::transport::UnixConnection::connect(options);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == common::ErrorCode::unavailable);
  CHECK_THAT(refused.error().message, Catch::Contains("the process listening on it"));
  CHECK_THAT(refused.error().message, Catch::Contains("runs as uid 4242"));

  options.trust = DaemonTrust::with_daemon_users("4242");
  CHECK(client::transport::UnixConnection::connect(options));
}

TEST_CASE("daemon trust: the default socket falls through an untrusted user socket to a trusted system socket") {
  TempDir dir("jitcache-trust");
  const std::string user_dir = make_dir(dir.file("user"), 0777);  // anyone could have made this one
  const std::string system_dir = make_dir(dir.file("system"), 0755);
  const std::string user = user_dir + "/jitcached.sock";
  const std::string system = system_dir + "/jitcached.sock";
  const std::string absent = dir.file("absent.sock");
  const DaemonTrust trust = DaemonTrust::callers_own();

  // Neither there: the user daemon's path, where starting jitcached would put it.
  CHECK(choose_default_socket({user, system}, trust) == user);
  auto user_listening = listen_at(user);
  // Only the untrusted one there: chosen, so that the connection says what is wrong with it.
  CHECK(choose_default_socket({user, absent}, trust) == user);
  auto system_listening = listen_at(system);
  CHECK(choose_default_socket({user, system}, trust) == system);
  // A trusted user socket is preferred, as before.
  const std::string own_dir = make_dir(dir.file("own"), 0700);
  auto own_listening = listen_at(own_dir + "/jitcached.sock");
  CHECK(choose_default_socket({own_dir + "/jitcached.sock", system}, trust) == own_dir + "/jitcached.sock");
}

TEST_CASE(
    "daemon trust: a system socket in a directory of a group the user is not in is named, with the group to join") {
  if (!root()) {
    JITCACHE_SKIP("acting as a uid outside the socket's group needs root (CI runs as root)");
  }
  TempDir dir("jitcache-trust");
  ::chmod(dir.path().c_str(), 0755);
  // As the package makes /run/jitcache: the daemon's group may search it, nobody else.
  const std::string system_dir = make_dir(dir.file("system"), 0750);
  REQUIRE(::chown(system_dir.c_str(), 0, 4243) == 0);
  const std::string system = system_dir + "/jitcached.sock";
  auto listening = listen_at(system);
  const std::string user = dir.file("absent-user/jitcached.sock");

  REQUIRE(::setegid(4242) == 0);
  REQUIRE(::seteuid(k_other_uid) == 0);
  const std::string chosen = choose_default_socket({user, system}, DaemonTrust::callers_own());
  auto checked = check_socket_path(system, DaemonTrust::callers_own());
  REQUIRE(::seteuid(0) == 0);
  REQUIRE(::setegid(0) == 0);

  // Before: the missing user socket was chosen, and its ENOENT told the user to start a daemon.
  CHECK(chosen == system);
  REQUIRE_FALSE(checked);
  CHECK_THAT(checked.error().message,
             Catch::Contains("Permission denied: " + system_dir + " is group 4243's (mode 0750)"));
  CHECK_THAT(checked.error().message, Catch::Contains("usermod -aG 4243 USER"));
}
