// A stored image that the driver refuses (here: a well-formed cubin for the wrong GPU, stored under
// the key with a valid checksum, so only the driver can tell) must not break the program: the
// client reports it, the daemon quarantines it, the client rebuilds and stores a good image, and
// the next load is a hit on that good image.
#include <catch2/catch.hpp>

#include <proto/messages.hpp>
#include <proto/wire.hpp>

#include <tests/gpu/cache_load.hpp>
#include <tests/gpu/gpu_paths.hpp>
#include <tests/gpu/gpu_session.hpp>
#include <tests/gpu/kernel_checks.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/store_plant.hpp>

using namespace jitcache::testing;
using namespace jitcache::testing::gpu;

namespace {

// An nvcc-built cubin this device cannot run: cubins run only within their CC major (docs/driver-facts.md §3).
std::string wrong_arch_cubin_name(const GpuDriver& gpu) {
  return gpu.cc_major == 8 ? "scale_sm90.cubin" : "scale_sm80.cubin";
}

// Stores `image` under the key of the entry whose id is `key_id`, replacing its image. The daemon
// refuses a PUT of a cubin that cannot serve the key's arch, so it is written into the file from
// outside, as an older jitcached, which stored any bytes, could have (store_plant.hpp), with the
// daemon stopped: a running one would go on serving the good image from its hot image cache and
// its published copy, which only its own writes invalidate.
void replace_image(DaemonProcess& daemon, const std::string& key_id, const std::string& image) {
  const jitcache::proto::Bytes bytes(reinterpret_cast<const std::uint8_t*>(image.data()), image.size());
  auto client = daemon.client();
  auto entry = client.lookup_by_id(key_id);
  REQUIRE(entry);
  REQUIRE(entry->has_value());
  jitcache::proto::PutRequest put;
  put.key = (*entry)->info.key;
  put.producer = "gpu test: a cubin for the wrong GPU";
  put.image = bytes;
  auto refused = client.put(put);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().reply_status == static_cast<std::uint16_t>(jitcache::proto::Status::bad_request));
  REQUIRE(daemon.stop() == 0);
  plant_image(daemon.state_dir() + "/jitcache.db", key_id, bytes);
  daemon.start();
}

}  // namespace

TEST_CASE(
    "gpu: a stored image the driver refuses is reported, quarantined and rebuilt, and the kernel still sums right") {
  TempDir state("jitcache-gpu");
  DaemonProcess daemon(state);
  daemon.start();
  use_daemon(daemon.socket_path());
  const std::string ptx = read_corpus_ptx("small_kernel.ptx");
  const std::string wrong_image = read_fixture(wrong_arch_cubin_name(driver()));

  CacheLoad stored = load_through_cache(ptx.c_str());
  INFO("first load: " << stored.describe());
  REQUIRE(stored.result == CUDA_SUCCESS);
  REQUIRE(stored.outcome() == expected_miss_outcome(daemon));
  replace_image(daemon, stored.info.key_id, wrong_image);

  CacheLoad rebuilt = load_through_cache(ptx.c_str());
  INFO("load of the wrong image: " << rebuilt.describe());
  REQUIRE(rebuilt.result == CUDA_SUCCESS);
  CHECK(rebuilt.outcome() == "rebuilt_after_failed_load");
  CHECK(rebuilt.info.stage_result == CUDA_ERROR_NO_BINARY_FOR_GPU);
  CHECK(rebuilt.info.ns_report > 0);
  const KernelCheck rebuilt_sums = check_reduce_partial(driver(), rebuilt.module.get());
  INFO(rebuilt_sums.detail);
  CHECK(rebuilt_sums.ok);

  const jitcache_counters counters = client_counters();
  CHECK(counters.failure_reports == 1);
  CHECK(counters.rebuilt_after_failed_load == 1);
  // The rebuild is the driver's own JIT, stored with a PUT (a daemon-compiled first image had no PUT).
  CHECK(counters.puts == (stored.outcome() == "compiled_locally" ? 2u : 1u));
  CHECK(daemon_stat(daemon, "failure_reports") == 1);
  CHECK(daemon_stat(daemon, "quarantines") == 1);
  // The rebuilt image replaced the quarantined one, so nothing stays quarantined.
  CHECK(daemon_stat(daemon, "entries_quarantined") == 0);

  CacheLoad again = load_through_cache(ptx.c_str());
  INFO("load after the rebuild: " << again.describe());
  REQUIRE(again.result == CUDA_SUCCESS);
  CHECK(again.outcome() == "hit");
  const KernelCheck again_sums = check_reduce_partial(driver(), again.module.get());
  INFO(again_sums.detail);
  CHECK(again_sums.ok);
}
