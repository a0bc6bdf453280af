// A real nginx (Debian's `nginx` package: its http_dav_module takes PUT and DELETE) started by a
// test as the HTTP cache server of the fleet tier (docs/remote-layout.md), on a free loopback
// port, with everything it writes (configuration, pid file, logs, temporary bodies, the stored
// files) in a temporary directory removed at the end.
//
// It runs as one process (`master_process off`): no worker processes, so pause() and kill() reach
// all of it with one signal, and a test run as root (CI) needs no `user` directive for the files of
// a directory only root may read. Started as
//   nginx -p DIR -c DIR/nginx.conf -g 'daemon off;'
// Locations: `/` takes GET, HEAD, PUT (creating missing folders: create_full_put_path) and DELETE,
// behind basic authentication when NginxOptions::user is set; NginxOptions::read_only_location
// adds one where only GET and HEAD are allowed (limit_except), as a fleet's read-only location is
// configured.
//
// nginx gets SIGKILL when the thread that started it ends (PR_SET_PDEATHSIG), so that a test
// process killed by a crash or by ctest's timeout leaves no nginx behind: start it from the thread
// that runs the test.
//
// Thread safety: one owner; port(), url(), root() and ca_file() may be read from any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include <tests/support/temp_dir.hpp>

namespace jitcache::testing {

struct NginxOptions {
  // Basic authentication on every location: the one user of the auth_basic_user_file the harness
  // writes (nginx's {PLAIN} password scheme). Empty user: no authentication.
  std::string user;
  std::string password;
  // HTTPS with a self-signed certificate made for this server (ca_file() is the file to trust).
  bool tls = false;
  // The certificate's subjectAltName (with tls): the names a client may verify it for.
  std::string tls_names = "DNS:localhost,IP:127.0.0.1";
  // A location, such as "/ro/", where only GET and HEAD are allowed (others: 403); empty: none.
  std::string read_only_location;
};

class NginxServer {
 public:
  // Starts nginx and returns once it is listening (its pid file written, its port accepting).
  // Throws std::runtime_error, with nginx's error log, when it cannot (no nginx installed:
  // scripts/install-deps installs it; or no free port after several tries).
  explicit NginxServer(NginxOptions options = {});
  ~NginxServer();  // SIGKILL (a paused nginx too), then waits for it
  NginxServer(const NginxServer&) = delete;
  NginxServer& operator=(const NginxServer&) = delete;

  std::uint16_t port() const { return m_port; }
  // "http://127.0.0.1:<port><prefix>" (https:// with tls); `host` names the server otherwise, e.g.
  // "localhost" to have the certificate's DNS name and SNI checked rather than its IP address.
  std::string url(const std::string& prefix = "/jc", const std::string& host = "127.0.0.1") const;
  // The document root: url(prefix)/<space>/<id> is the file root()/<prefix>/<space>/<id>.
  std::string root() const { return m_dir.file("root"); }
  // The self-signed certificate in PEM (with tls), to pass as HttpSettings::ca_file.
  std::string ca_file() const { return m_dir.file("cert.pem"); }
  // nginx's error log as it is now, for a failing test's message.
  std::string error_log() const;

  void pause();   // SIGSTOP: connections are still accepted by the kernel but never answered
  void resume();  // SIGCONT
  void kill();    // SIGKILL and reap: its port refuses connections from now on
  bool running() const { return m_pid > 0; }
  pid_t pid() const { return m_pid; }

 private:
  void write_config() const;
  bool start_once();  // false: the port was taken meanwhile (try another)

  NginxOptions m_options;
  TempDir m_dir;
  std::uint16_t m_port = 0;
  pid_t m_pid = -1;
};

// The nginx executable: $JITCACHE_NGINX when set, else /usr/sbin/nginx (Debian's), else "" when
// none is installed.
std::string nginx_executable();

}  // namespace jitcache::testing
