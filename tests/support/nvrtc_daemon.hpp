// The set-up of the tests of NVRTC compiles under libjitcache-preload.so against a real daemon: a
// daemon on a temp state directory, and the program (g) (tests/programs/nvrtc_compile.c, through
// nvrtc_program_run.hpp) run with the preload library against it (cached), without it (plain: what
// NVRTC itself answers), or as another uid. A test target that includes this defines
// JITCACHE_NVRTC_PROGRAM and JITCACHE_NVRTC_LIBRARY (tests/CMakeLists.txt).
// Thread safety: test helpers; cached() and plain() may run on several threads at once.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/nvrtc_program_run.hpp>
#include <tests/support/system_users.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/transparent_check.hpp>

namespace jitcache::testing::nvrtc {

// DaemonOptions for a daemon that compiles NVRTC programs with the toolkit's NVRTC
// (compile_nvrtc_library), besides `extra`.
inline DaemonOptions with_daemon_nvrtc(DaemonOptions options = {}) {
  options.extra_args.push_back("--compile-nvrtc-library");
  options.extra_args.push_back(JITCACHE_NVRTC_LIBRARY);
  return options;
}

class NvrtcDaemon {
 public:
  explicit NvrtcDaemon(DaemonOptions options = {}, std::string state_prefix = "jitcache-test")
      : m_state(state_prefix), m_daemon(m_state, std::move(options)) {
    m_daemon.start();
  }

  DaemonProcess& daemon() { return m_daemon; }
  const TempDir& state() const { return m_state; }
  const std::string& socket_path() const { return m_daemon.socket_path(); }
  client::transport::DaemonClient client() const { return m_daemon.client(); }
  std::uint64_t stat(const std::string& name) const {
    auto connection = m_daemon.client();
    return stat_value(connection, name);
  }

  // The program under libjitcache-preload.so against this daemon.
  ChildResult cached(const std::vector<std::string>& args, std::vector<EnvChange> extra = {}) const {
    return run_program(args, transparent::run_env(m_daemon.socket_path(), true, std::move(extra)));
  }
  // The program alone: NVRTC's own answers.
  ChildResult plain(const std::vector<std::string>& args) const {
    return run_program(args, transparent::run_env(m_state.file("none.sock"), false));
  }
  // The program under the preload library as `user` of `users` (setpriv; the daemon's socket group
  // must be users.group_name()).
  ChildResult cached_as(const SystemUsers& users, const SystemUser& user, const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"/usr/bin/setpriv", "--reuid=" + std::to_string(user.uid),
                                     "--regid=" + std::to_string(user.gid), "--groups=" + std::to_string(users.group()),
                                     JITCACHE_NVRTC_PROGRAM};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<EnvChange> env = transparent::run_env(m_daemon.socket_path(), true);
    env.push_back({"NVRTC_LIBRARY", std::string(JITCACHE_NVRTC_LIBRARY)});
    return run_child(argv, env, std::chrono::seconds(120));
  }

 private:
  TempDir m_state;
  DaemonProcess m_daemon;
};

}  // namespace jitcache::testing::nvrtc
