#include <tests/gpu/gpu_paths.hpp>

#include <cstdlib>
#include <stdexcept>

#include <tests/support/temp_dir.hpp>

namespace jitcache::testing::gpu {

namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return (value != nullptr && *value != '\0') ? value : fallback;
}

std::string read_named(const std::string& path, const char* what) {
  try {
    return read_file(path);
  } catch (const std::exception&) {
    throw std::runtime_error(std::string("cannot read ") + what + " " + path);
  }
}

}  // namespace

std::string corpus_dir() { return env_or("JITCACHE_CORPUS_DIR", JITCACHE_CORPUS_DIR); }
std::string fixture_dir() { return env_or("JITCACHE_GPU_FIXTURE_DIR", JITCACHE_GPU_FIXTURE_DIR); }

std::string read_corpus_ptx(const std::string& name) {
  return read_named(corpus_dir() + "/" + name, "the corpus PTX (set JITCACHE_CORPUS_DIR)");
}

std::string read_fixture(const std::string& name) {
  return read_named(fixture_dir() + "/" + name,
                    "the nvcc-built fixture (built with nvcc; set JITCACHE_GPU_FIXTURE_DIR)");
}

}  // namespace jitcache::testing::gpu
