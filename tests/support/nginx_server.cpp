#include <tests/support/nginx_server.hpp>

#include <tests/support/loopback_port.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <tests/support/child_process.hpp>

namespace jitcache::testing {

namespace {

constexpr int k_start_attempts = 8;
constexpr auto k_start_timeout = std::chrono::seconds(15);

bool accepts_connections(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool connected = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return connected;
}

std::string read_if_present(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void make_certificate(const TempDir& dir, const std::string& names) {
  const auto result =
      run_child_captured({"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                          "-nodes", "-keyout", dir.file("key.pem"), "-out", dir.file("cert.pem"), "-days", "2", "-subj",
                          "/CN=jitcache test server", "-addext", "subjectAltName=" + names},
                         {}, std::chrono::seconds(30));
  if (result.status != 0) {
    throw std::runtime_error("nginx harness: openssl req failed (status " + std::to_string(result.status) +
                             "; scripts/install-deps installs openssl): " + result.errors);
  }
}

}  // namespace

std::string nginx_executable() {
  if (const char* configured = std::getenv("JITCACHE_NGINX"); configured != nullptr && *configured != '\0') {
    return configured;
  }
  for (const char* candidate : {"/usr/sbin/nginx", "/usr/bin/nginx"}) {
    if (::access(candidate, X_OK) == 0) return candidate;
  }
  return "";
}

NginxServer::NginxServer(NginxOptions options) : m_options(std::move(options)), m_dir("jitcache-nginx") {
  if (nginx_executable().empty()) {
    throw std::runtime_error("nginx harness: no nginx installed (scripts/install-deps installs Debian's nginx)");
  }
  // nginx reads and writes all of it as the test's own user (one process, no `user` switch), but
  // keep it traversable for a reader of the logs after a failure.
  ::chmod(m_dir.path().c_str(), 0755);
  std::filesystem::create_directories(root());
  std::filesystem::create_directories(m_dir.file("tmp"));
  if (m_options.tls) make_certificate(m_dir, m_options.tls_names);
  if (!m_options.user.empty()) {
    // {PLAIN}: nginx's scheme for a clear-text password (ngx_http_auth_basic_module's user file
    // accepts crypt(3) hashes and the {PLAIN}, {SHA} and {SSHA} schemes).
    write_file(m_dir.file("htpasswd"), m_options.user + ":{PLAIN}" + m_options.password + "\n");
  }
  for (int attempt = 0; attempt < k_start_attempts; ++attempt) {
    m_port = free_loopback_port();
    if (start_once()) return;
  }
  throw std::runtime_error("nginx harness: every port tried was taken before nginx bound it:\n" + error_log());
}

NginxServer::~NginxServer() { kill(); }

std::string NginxServer::url(const std::string& prefix, const std::string& host) const {
  return std::string(m_options.tls ? "https://" : "http://") + host + ":" + std::to_string(m_port) + prefix;
}

std::string NginxServer::error_log() const {
  return read_if_present(m_dir.file("error.log")) + read_if_present(m_dir.file("stderr.log"));
}

void NginxServer::write_config() const {
  const std::string dir = m_dir.path();
  std::ostringstream conf;
  conf << "# Written by tests/support/nginx_server.cpp for one test.\n"
       << "master_process off;\n"
       << "worker_processes 1;\n"
       << "pid " << dir << "/nginx.pid;\n"
       << "error_log " << dir << "/error.log info;\n"
       << "events { worker_connections 512; }\n"
       << "http {\n"
       << "  access_log " << dir << "/access.log;\n"
       << "  client_body_temp_path " << dir << "/tmp/body;\n"
       << "  proxy_temp_path " << dir << "/tmp/proxy;\n"
       << "  fastcgi_temp_path " << dir << "/tmp/fastcgi;\n"
       << "  uwsgi_temp_path " << dir << "/tmp/uwsgi;\n"
       << "  scgi_temp_path " << dir << "/tmp/scgi;\n"
       << "  client_max_body_size 0;\n"
       << "  keepalive_requests 100000;\n"
       << "  server {\n"
       << "    listen 127.0.0.1:" << m_port << (m_options.tls ? " ssl" : "") << ";\n";
  if (m_options.tls) {
    conf << "    ssl_certificate " << dir << "/cert.pem;\n"
         << "    ssl_certificate_key " << dir << "/key.pem;\n";
  }
  conf << "    root " << dir << "/root;\n";
  if (!m_options.user.empty()) {
    conf << "    auth_basic \"jitcache test\";\n"
         << "    auth_basic_user_file " << dir << "/htpasswd;\n";
  }
  conf << "    location / {\n"
       << "      dav_methods PUT DELETE;\n"
       << "      create_full_put_path on;\n"
       << "      dav_access user:rw group:r all:r;\n"
       << "    }\n";
  if (!m_options.read_only_location.empty()) {
    conf << "    location " << m_options.read_only_location << " {\n"
         << "      limit_except GET HEAD { deny all; }\n"
         << "    }\n";
  }
  conf << "  }\n"
       << "}\n";
  write_file(m_dir.file("nginx.conf"), conf.str());
}

bool NginxServer::start_once() {
  write_config();
  const std::string pid_file = m_dir.file("nginx.pid");
  std::filesystem::remove(pid_file);
  std::vector<std::string> args{nginx_executable(),       "-p", m_dir.path(), "-c",
                                m_dir.file("nginx.conf"), "-g", "daemon off;"};
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string output = m_dir.file("stderr.log");
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("nginx harness: fork failed");
  if (pid == 0) {
    // A test process that dies without its destructors (a crash, ctest's timeout) takes nginx with
    // it instead of leaving it on its port.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(126);
    const int out = ::open(output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (out >= 0) {
      ::dup2(out, 1);
      ::dup2(out, 2);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  m_pid = pid;

  // Ready when its pid file names it (written once its sockets are bound: it is our nginx that
  // listens, not another process that took the port) and the port accepts.
  const auto deadline = std::chrono::steady_clock::now() + k_start_timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(m_pid, &status, WNOHANG) == m_pid) {
      m_pid = -1;
      const std::string log = error_log();
      if (log.find("Address already in use") != std::string::npos) return false;
      throw std::runtime_error("nginx harness: nginx exited at start (status " + std::to_string(status) + "):\n" + log);
    }
    const std::string written = read_if_present(pid_file);
    if (!written.empty() && std::atoi(written.c_str()) == m_pid && accepts_connections(m_port)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill();
  throw std::runtime_error("nginx harness: nginx did not start listening within 15 s:\n" + error_log());
}

void NginxServer::pause() {
  if (m_pid > 0) ::kill(m_pid, SIGSTOP);
}

void NginxServer::resume() {
  if (m_pid > 0) ::kill(m_pid, SIGCONT);
}

void NginxServer::kill() {
  if (m_pid <= 0) return;
  ::kill(m_pid, SIGKILL);
  int status = 0;
  ::waitpid(m_pid, &status, 0);
  m_pid = -1;
}

}  // namespace jitcache::testing
