// The load-flow fixture shared by the integration tests of libjitcache against the real daemon
// (test_client_load_flow.cpp, test_client_published.cpp): the fake driver selected before the
// library's first load, the test PTX from tests/data, the library pointed at a daemon, and helpers
// that load and read what happened. Header-only because it asserts with Catch2.
// Thread safety: test code; one test at a time.
#pragma once

#include <catch2/catch.hpp>

#include <jitcache/jitcache.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/fake_driver.hpp>
#include <tests/support/temp_dir.hpp>

namespace jitcache::testing::load_flow {

inline const FakeDriver& fake() {
  static FakeDriver driver;  // selects the fake before libjitcache's first load
  return driver;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline const std::string& small_ptx() {
  static const std::string ptx = read_text(std::string(JITCACHE_TEST_DATA_DIR) + "/small_kernel.ptx");
  return ptx;
}

inline void use_socket(const std::string& socket, unsigned request_timeout_ms = 0) {
  jitcache_config config{};
  config.struct_size = sizeof(config);
  config.socket_path = socket.c_str();
  config.quiet = 1;
  config.request_timeout_ms = request_timeout_ms;
  REQUIRE(jitcache_configure(&config) == 0);
}

inline jitcache_load_info last_info() {
  jitcache_load_info info{};
  info.struct_size = sizeof(info);
  REQUIRE(jitcache_last_load_info(&info) == 0);
  return info;
}

inline jitcache_counters counters() {
  jitcache_counters c{};
  c.struct_size = sizeof(c);
  REQUIRE(jitcache_get_counters(&c) == 0);
  return c;
}

inline std::uint64_t stat_value(DaemonProcess& daemon, const std::string& name) {
  auto client = daemon.client();
  return jitcache::testing::stat_value(client, name);
}

// Loads `image` and unloads the module again; returns the outcome, checking the result on the way.
inline jitcache_load_outcome load_expecting(const void* image, CUresult expected, unsigned n = 0,
                                            CUjit_option* options = nullptr, void** values = nullptr) {
  CUmodule module = nullptr;
  CUresult result = jitcache_module_load_data_ex(&module, image, n, options, values);
  const auto info = last_info();
  INFO("outcome " << jitcache_outcome_name(info.outcome) << ": " << info.reason);
  REQUIRE(result == expected);
  CHECK(info.result == expected);
  if (result == CUDA_SUCCESS) {
    REQUIRE(module != nullptr);
    CHECK(jitcache_module_unload(module) == CUDA_SUCCESS);
  }
  return info.outcome;
}

// A daemon fixture: the real jitcached on a temp socket, the library pointed at it. Unless
// `compiles`, the daemon does not compile (compile = false), so a miss takes the local JIT path.
// Unless `publishes`, it publishes nothing (publish = false), so every hit goes through the socket
// and the socket path's counters are what a test sees. `before_exec`: DaemonOptions::before_exec.
struct LiveDaemon {
  explicit LiveDaemon(bool compiles = false, std::vector<std::string> args = {}, bool publishes = false,
                      std::function<void()> before_exec = {})
      : daemon(dir,
               {std::move(args),
                {{"JITCACHE_COMPILE", compiles ? "true" : "false"}, {"JITCACHE_PUBLISH", publishes ? "true" : "false"}},
                "warn",
                -1,
                std::move(before_exec)}) {
    fake().clear_failures();
    fake().set_device(90, 13000);
    daemon.start();
    use_socket(daemon.socket_path());
  }
  TempDir dir;
  DaemonProcess daemon;
};

}  // namespace jitcache::testing::load_flow
