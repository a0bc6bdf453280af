// libjitcache's NVRTC functions (<jitcache/nvrtc.h>) in a program that links libjitcache, against
// the real daemon and the toolkit's real NVRTC (no GPU needed): the second compile of the same
// program is a hit that answers exactly what NVRTC answered, lowered name and log included.
#include <catch2/catch.hpp>

#include <jitcache/jitcache.h>
#include <jitcache/nvrtc.h>

#include <string>
#include <vector>

#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/temp_dir.hpp>

using jitcache::testing::DaemonProcess;
using jitcache::testing::stat_value;
using jitcache::testing::TempDir;

namespace {

// Every answer a program can read after a compile, as text.
std::string compile_once(const char* source, const std::vector<const char*>& options) {
  void* program = nullptr;
  const char* header = "#define MEMORY_VALUE 5\n";
  const char* header_name = "memory_header.cuh";
  std::string out =
      "create=" + std::to_string(jitcache_nvrtc_create_program(&program, source, "api.cu", 1, &header, &header_name));
  out += " name=" + std::to_string(jitcache_nvrtc_add_name_expression(program, "triple<float>"));
  out += " compile=" +
         std::to_string(jitcache_nvrtc_compile_program(program, static_cast<int>(options.size()), options.data()));
  for (int output = JITCACHE_NVRTC_LOG; output <= JITCACHE_NVRTC_OPTIXIR; ++output) {
    std::size_t size = 0;
    const int size_result = jitcache_nvrtc_get_output_size(program, output, &size);
    std::string bytes(size + 1, '\0');
    const int bytes_result = size_result == 0 ? jitcache_nvrtc_get_output(program, output, bytes.data()) : -1;
    bytes.resize(size);
    out += " [" + std::to_string(output) + ": " + std::to_string(size_result) + "," + std::to_string(bytes_result) +
           "," + std::to_string(std::hash<std::string>{}(bytes)) + "]";
  }
  const char* lowered = nullptr;
  const int lowered_result = jitcache_nvrtc_get_lowered_name(program, "triple<float>", &lowered);
  out += " lowered=" + std::to_string(lowered_result) + "," + (lowered_result == 0 ? lowered : "");
  out += " destroy=" + std::to_string(jitcache_nvrtc_destroy_program(&program));
  return out;
}

jitcache_load_outcome last_outcome() {
  jitcache_load_info info{};
  info.struct_size = sizeof(info);
  REQUIRE(jitcache_last_load_info(&info) == 0);
  return info.outcome;
}

}  // namespace

TEST_CASE("nvrtc api: the second compile of a program is a hit answering what NVRTC answered") {
  TempDir state;
  DaemonProcess daemon(state);
  daemon.start();
  auto client = daemon.client();
  jitcache_config config{};
  config.struct_size = sizeof(config);
  config.socket_path = daemon.socket_path().c_str();
  config.quiet = 1;
  REQUIRE(jitcache_configure(&config) == 0);

  const char* source =
      "#include \"memory_header.cuh\"\n"
      "template <typename T> __global__ void triple(T* x) { x[threadIdx.x] *= (T)(3 * MEMORY_VALUE); }\n";
  const std::vector<const char*> options = {"-arch=sm_90", "-std=c++17"};
  const std::string first = compile_once(source, options);
  INFO(first);
  CHECK_THAT(first, Catch::Contains("compile=0") && Catch::Contains("lowered=0,_Z6tripleIfEvPT_"));
  CHECK(last_outcome() == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  CHECK(stat_value(client, "entries") == 1);

  const std::string second = compile_once(source, options);
  CHECK(second == first);
  CHECK(last_outcome() == JITCACHE_OUTCOME_HIT);
  CHECK(stat_value(client, "hits") == 1);

  // A compile error: the same result and log from the cache as from NVRTC.
  const char* broken = "__global__ void triple(float* x) { x[0] = undeclared_name; }\n";
  const std::string failed = compile_once(broken, options);
  CHECK_THAT(failed, Catch::Contains("compile=6"));
  CHECK(compile_once(broken, options) == failed);
  CHECK(last_outcome() == JITCACHE_OUTCOME_HIT);

  CHECK(jitcache_nvrtc_get_output_size(nullptr, 9, nullptr) == 3);  // NVRTC_ERROR_INVALID_INPUT
}
