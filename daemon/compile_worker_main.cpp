// jitcache-compile: compiles one PTX job with nvJitLink, or one NVRTC program with the NVRTC the
// job names (compile_worker/nvrtc_compile.hpp), and exits (docs/compile-service.md).
//
// jitcached starts one per compile with only its two pipes, under CPU, memory and wall-time limits,
// so a PTX that crashes or hangs the compiler takes down this process and never the daemon. It
// never opens the store. Usage: `jitcache-compile` (job on stdin, reply on stdout),
// `jitcache-compile --version` (prints "nvJitLink X.Y", then the library's build as a link's key
// names it: "13000 nvjitlink-13.0-98806736") or `jitcache-compile --nvrtc-identity PATH` (opens the
// configured NVRTC and prints its identity: compile_worker/nvrtc_library.hpp).
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include <daemon/compile/worker_protocol.hpp>
#include <daemon/compile_worker/nvjitlink_compile.hpp>
#include <daemon/compile_worker/nvrtc_compile.hpp>
#include <daemon/compile_worker/nvrtc_library.hpp>
#include <daemon/compile_worker/stdio_pipes.hpp>

namespace {

namespace compile = jitcache::daemon::compile;
namespace worker = jitcache::daemon::compile_worker;

// Rationale: a job is the PTX plus a few hundred bytes; PTX over 1 GiB is not something to compile.
constexpr std::size_t k_max_job_bytes = std::size_t{1} << 30;

[[noreturn]] void out_of_memory() { _exit(compile::k_exit_out_of_memory); }

int run() {
  auto bytes = worker::read_all(STDIN_FILENO, k_max_job_bytes);
  if (!bytes) return compile::k_exit_io;
  auto job = compile::decode_job(*bytes);
  if (!job) {
    std::fprintf(stderr, "jitcache-compile: %s\n", job.error().message.c_str());
    return compile::k_exit_bad_job;
  }
  bytes->clear();
  bytes->shrink_to_fit();
  const auto reply = compile::encode_reply(job->nvrtc ? worker::compile_with_nvrtc(*job->nvrtc)
                                                      : worker::compile_with_nvjitlink(*job));
  if (!worker::write_all(STDOUT_FILENO, reply)) return compile::k_exit_io;
  // Rationale: the reply is whole, so nothing is left to do but leave, and leaving is slow: the
  // static destructors of nvJitLink took ~1.4 ms and tearing down the address space a few more
  // (docs/compile-service.md "Spare workers"), before the kernel closes the pipes. Closing them now
  // lets the daemon answer meanwhile; _exit skips the destructors, which free nothing the kernel
  // would not.
  ::close(STDOUT_FILENO);
  ::close(STDERR_FILENO);
  _exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  worker::close_inherited_descriptors();
  // Rationale: nvJitLink consults a persistent compute cache of its own unless this is set
  // (measured on the H200 host: 32 compiles of cub_kernels.ptx took 0.55 s after one had run, 14 s
  // with it set; docs/benchmarks.md). The daemon is the cache: a worker must really compile, so its
  // compile time means something and nothing is read from or written to the daemon user's home.
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  std::set_new_handler(out_of_memory);
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    const std::string version = worker::nvjitlink_version_text();
    if (version.empty()) return compile::k_exit_io;
    std::printf("%s\n", version.c_str());
    if (const std::string identity = worker::nvjitlink_identity_text(); !identity.empty()) {
      std::printf("%s\n", identity.c_str());
    }
    return 0;
  }
  if (argc == 3 && std::strcmp(argv[1], "--nvrtc-identity") == 0) {
    auto identity = worker::configured_nvrtc_identity(argv[2]);
    if (!identity) {
      std::fprintf(stderr, "jitcache-compile: %s\n", identity.error().message.c_str());
      return compile::k_exit_bad_job;
    }
    std::printf("%s\n", worker::nvrtc_identity_line(*identity).c_str());
    return 0;
  }
  if (argc != 1) {
    std::fprintf(stderr,
                 "usage: jitcache-compile [--version | --nvrtc-identity LIBRARY]  (a job on stdin, the reply on "
                 "stdout)\n");
    return compile::k_exit_bad_job;
  }
  try {
    return run();
  } catch (const std::bad_alloc&) {
    return compile::k_exit_out_of_memory;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "jitcache-compile: %s\n", e.what());
    return compile::k_exit_io;
  }
}
