// An include record taken before the compile names the disk as it was then (docs/cache-key.md "Files
// read from disk"); NVRTC reads the disk again as it compiles. A header that appears (or changes)
// between the two would be stored under the key of the disk before it: every later program whose
// disk is as it was before — another uid's too, when the entry is shared — would be served output
// built from a header it does not have. Here the window is made wide and certain: the test holds the
// key's single-flight lock (client/src/nvrtc/compile_lock.hpp) while the program (g) has scanned and
// missed, adds the header, and then lets it compile.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/eventually.hpp>
#include <tests/support/nvrtc_daemon.hpp>
#include <tests/support/nvrtc_program_run.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/transparent_check.hpp>

using jitcache::testing::ChildResult;
using jitcache::testing::DaemonProcess;
using jitcache::testing::EnvChange;
using jitcache::testing::stat_value;
using jitcache::testing::TempDir;
using jitcache::testing::write_file;
using jitcache::testing::nvrtc::NvrtcDaemon;
using jitcache::testing::nvrtc::run_program;
using jitcache::testing::transparent::run_env;

namespace {

// VALUE is 7 when flag.cuh is in the -I directory, else 5.
constexpr const char* k_kernel =
    "#if __has_include(\"flag.cuh\")\n#define VALUE 7\n#else\n#define VALUE 5\n#endif\n"
    "extern \"C\" __global__ void k(int* p) { *p = VALUE; }\n";

std::string key_id_in_report(const std::string& path) {
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::smatch found;
  REQUIRE(std::regex_search(text, found, std::regex("\"key_id\": \"([0-9a-f]{64})\"")));
  return found[1];
}

}  // namespace

TEST_CASE("transparent nvrtc: (g) a header that appears while the compile waits is not stored under the key before") {
  TempDir dir;
  const std::string kernel = dir.file("kernel.cu");
  const std::string include_dir = dir.file("include");
  const std::string runtime = dir.file("runtime");
  std::filesystem::create_directories(include_dir);
  std::filesystem::create_directories(runtime);
  REQUIRE(::chmod(runtime.c_str(), 0700) == 0);
  write_file(kernel, k_kernel);
  const std::vector<std::string> args = {kernel, "-", "-I" + include_dir, "-arch=sm_90"};
  const EnvChange private_dir{"XDG_RUNTIME_DIR", runtime};

  // The key id of the compile without flag.cuh, from a daemon of its own.
  std::string key_id;
  {
    TempDir first_state;
    DaemonProcess first(first_state);
    first.start();
    const std::string report = dir.file("report.json");
    REQUIRE(run_program(args, run_env(first.socket_path(), true, {private_dir, {"JITCACHE_REPORT", report}})).status ==
            0);
    key_id = key_id_in_report(report);
  }

  NvrtcDaemon cache;
  auto client = cache.client();
  const std::string lock_path = runtime + "/jitcache-nvrtc/" + key_id + ".lock";
  std::filesystem::create_directories(runtime + "/jitcache-nvrtc");
  REQUIRE(::chmod((runtime + "/jitcache-nvrtc").c_str(), 0700) == 0);
  const int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  REQUIRE(lock >= 0);
  REQUIRE(::flock(lock, LOCK_EX) == 0);

  ChildResult raced;
  std::thread program([&] { raced = cache.cached(args, {private_dir}); });
  // The program has scanned (no flag.cuh) and missed; it now waits for the lock.
  const bool missed =
      jitcache::testing::eventually([&] { return stat_value(client, "nvrtc_misses") >= 1; }, std::chrono::seconds(60));
  write_file(include_dir + "/flag.cuh", "\n");
  ::flock(lock, LOCK_UN);
  ::close(lock);
  program.join();
  REQUIRE(missed);
  REQUIRE(raced.status == 0);

  // The disk as it was at the scan again: the answer must be NVRTC's for it (VALUE 5).
  std::filesystem::remove(include_dir + "/flag.cuh");
  const ChildResult plain = cache.plain(args);
  REQUIRE(plain.status == 0);
  REQUIRE(plain.output != raced.output);  // flag.cuh reaches the code
  const ChildResult cached = cache.cached(args, {private_dir});
  CHECK(cached.output == plain.output);
}
