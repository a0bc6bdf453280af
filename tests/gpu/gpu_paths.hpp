// Where the GPU tests find their inputs. Each directory comes from a compile definition and can be
// overridden at run time, because the GPU machine runs a copy of the binaries in another place
// (scripts/gpu-bundle): $JITCACHE_CORPUS_DIR for the PTX corpus, $JITCACHE_GPU_FIXTURE_DIR for the
// nvcc-built cubins and fat binaries.
// Thread safety: pure functions over the environment.
#pragma once

#include <string>

namespace jitcache::testing::gpu {

std::string corpus_dir();
std::string fixture_dir();

// The contents of a file, for loading (a std::string's data() ends in the NUL that PTX needs).
// Throws (failing the test that asked) when the file cannot be read, naming it.
std::string read_corpus_ptx(const std::string& name);
std::string read_fixture(const std::string& name);

}  // namespace jitcache::testing::gpu
