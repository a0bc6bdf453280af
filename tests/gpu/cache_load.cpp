#include <tests/gpu/cache_load.hpp>

#include <stdexcept>

namespace jitcache::testing::gpu {

namespace {
// Reserved in PROTOCOL.md ("Bits 1 compile ... are set by later versions"); no constant exists yet.
constexpr std::uint64_t k_capability_compile = 1ull << 1;
}  // namespace

std::string CacheLoad::describe() const {
  return "outcome " + outcome() + ", result " + std::to_string(static_cast<int>(result)) + ", stage " +
         jitcache_stage_name(info.stage) + " (" + info.result_name + "), arch " + info.arch + ", key " +
         std::string(info.key_id).substr(0, 16) + ": " + info.reason;
}

CacheLoad load_through_cache(const void* image) {
  CacheLoad load;
  CUmodule handle = nullptr;
  load.result = jitcache_module_load_data(&handle, image);
  if (load.result == CUDA_SUCCESS) load.module.reset(handle);
  load.info = jitcache::last_load_info();
  return load;
}

void use_daemon(const std::string& socket) {
  jitcache_config config{};
  config.struct_size = sizeof(config);
  config.socket_path = socket.c_str();
  config.quiet = 1;
  if (jitcache_configure(&config) != 0) throw std::runtime_error("jitcache_configure failed");
}

jitcache_counters client_counters() { return jitcache::counters(); }

std::uint64_t daemon_stat(const DaemonProcess& daemon, const std::string& name) {
  auto client = daemon.client();
  auto stats = client.stats();
  if (!stats) throw std::runtime_error("STATS failed: " + stats.error().message);
  for (const auto& [stat, value] : stats->values) {
    if (stat == name) return value;
  }
  throw std::runtime_error("the daemon's STATS has no \"" + name + "\"");
}

std::string expected_miss_outcome(const DaemonProcess& daemon) {
  auto client = daemon.client();
  auto hello = client.hello("jitcache gpu test");
  if (!hello) throw std::runtime_error("HELLO failed: " + hello.error().message);
  return (hello->capabilities & k_capability_compile) != 0 ? "compiled_by_daemon" : "compiled_locally";
}

}  // namespace jitcache::testing::gpu
