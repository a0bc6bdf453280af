// main() of the gpu tests (in place of Catch's): the tests need a GPU, and where there is none
// they say so and exit 77, which CTest's SKIP_RETURN_CODE turns into "skipped" rather than passed.
// A test case that cannot run on this GPU (a Python module missing) skips the same way
// (tests/support/test_skip.hpp).
//
// Rationale: the GPU is opened only when tests are about to run. Listing them
// (catch_discover_tests runs `--list-test-names-only` at build time) must work on a build machine
// without a GPU, or the build would fail there.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <iostream>
#include <string_view>

#include <tests/gpu/child_load.hpp>
#include <tests/gpu/gpu_session.hpp>
#include <tests/support/gpu_driver.hpp>
#include <tests/support/skip_status.hpp>

namespace {

bool only_lists(const Catch::ConfigData& config) {
  return config.listTests || config.listTestNamesOnly || config.listTags || config.listReporters || config.showHelp ||
         config.libIdentify;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace jitcache::testing;
  const bool child = argc == 3 && std::string_view(argv[1]) == gpu::k_child_load_flag;

  Catch::Session session;
  if (!child) {
    if (const int status = session.applyCommandLine(argc, argv); status != 0) return status;
    if (only_lists(session.configData())) return session.run();
  }

  auto opened = open_gpu();
  if (!opened) {
    std::cout << "SKIPPED: no usable GPU: " << opened.error().message << std::endl;
    return k_skip_status;
  }
  gpu::set_driver(std::move(*opened));
  if (child) return gpu::run_child_load(gpu::driver(), argv[2]);

  const GpuDriver& gpu = gpu::driver();
  std::cout << "GPU: " << gpu.device_name << " (sm_" << gpu.sm() << "), driver API " << gpu.api_version << ", "
            << gpu.library_file << std::endl;
  return skip_status(session.run());
}
