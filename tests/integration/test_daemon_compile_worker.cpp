// The real jitcache-compile worker and nvJitLink behind CompileRunner and CompileService: the cubin
// is for the key's arch (sm_90a PTX → an sm_90a cubin), its bytes equal a direct nvJitLink call
// with the mapped options, garbage PTX gives the compiler's log, nvJitLink's own arch refusal is a
// refusal, a worker killed mid-compile is reported, and 32 concurrent requests compile once.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <elf.h>
#include <nvJitLink.h>
#include <signal.h>

#include <cstring>
#include <fstream>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include <proto/jit_options.hpp>

#include <daemon/compile/compile_runner.hpp>
#include <daemon/compile/compile_service.hpp>
#include <daemon/compile/prepare_job.hpp>

#include <tests/support/temp_dir.hpp>

namespace {

using namespace jitcache::daemon::compile;
using namespace std::chrono_literals;

std::string corpus(const std::string& name) {
  return jitcache::testing::read_file(std::string(JITCACHE_TEST_DATA_DIR) + "/" + name);
}

CompileRunner runner() { return CompileRunner(JITCACHE_COMPILE_WORKER_PATH, CompileLimits{}); }

CompileJob job_for(const std::string& ptx, const std::string& arch, const std::string& option_text = "") {
  auto options = jitcache::proto::canonicalize_option_text(option_text);
  REQUIRE(options);
  auto prepared =
      prepare_job(CompileInput{arch, 13000, *options, jitcache::proto::as_bytes(ptx)}, ToolkitVersion{13, 0});
  REQUIRE(prepared);
  REQUIRE(std::holds_alternative<CompileJob>(*prepared));
  return std::get<CompileJob>(*prepared);
}

// The SM number a cubin is for: bits 8-15 of e_flags (docs/driver-facts.md §3; sm_90 and sm_90a share it).
unsigned cubin_sm(const std::vector<std::uint8_t>& image) {
  REQUIRE(image.size() >= sizeof(Elf64_Ehdr));
  Elf64_Ehdr header;
  std::memcpy(&header, image.data(), sizeof header);
  REQUIRE(std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0);
  CHECK(header.e_machine == 190);  // EM_CUDA
  return (header.e_flags >> 8) & 0xFF;
}

// The ptxas command nvJitLink records in .note.nv.tkinfo, e.g. "-arch sm_90a": the arch variant
// shows there (and in .nv.compat), not in e_flags.
bool records_arch(const std::vector<std::uint8_t>& image, const std::string& arch) {
  const std::string text(image.begin(), image.end());
  return text.find("-arch " + arch + " ") != std::string::npos ||
         text.find("-arch " + arch + '\0') != std::string::npos;
}

std::vector<std::uint8_t> direct_nvjitlink(const CompileJob& job) {
  std::vector<std::string> options{"-arch=" + job.arch};
  options.insert(options.end(), job.nvjitlink_options.begin(), job.nvjitlink_options.end());
  std::vector<const char*> pointers;
  for (const auto& o : options) pointers.push_back(o.c_str());
  nvJitLinkHandle handle = nullptr;
  REQUIRE(nvJitLinkCreate(&handle, static_cast<std::uint32_t>(pointers.size()), pointers.data()) == NVJITLINK_SUCCESS);
  const std::string ptx(job.ptx.begin(), job.ptx.end());  // NUL-terminated, as nvJitLink needs
  REQUIRE(nvJitLinkAddData(handle, NVJITLINK_INPUT_PTX, ptx.c_str(), ptx.size(), "direct.ptx") == NVJITLINK_SUCCESS);
  REQUIRE(nvJitLinkComplete(handle) == NVJITLINK_SUCCESS);
  std::size_t size = 0;
  REQUIRE(nvJitLinkGetLinkedCubinSize(handle, &size) == NVJITLINK_SUCCESS);
  std::vector<std::uint8_t> cubin(size);
  REQUIRE(nvJitLinkGetLinkedCubin(handle, cubin.data()) == NVJITLINK_SUCCESS);
  nvJitLinkDestroy(&handle);
  return cubin;
}

std::string with_target(std::string ptx, const std::string& target) {
  const auto at = ptx.find(".target sm_90");
  REQUIRE(at != std::string::npos);
  return ptx.replace(at, std::strlen(".target sm_90"), ".target " + target);
}

// Pids of this process's children whose command is `name` (from /proc/<pid>/stat).
std::vector<pid_t> children_named(const std::string& name) {
  std::vector<pid_t> found;
  DIR* proc = ::opendir("/proc");
  while (dirent* entry = proc != nullptr ? ::readdir(proc) : nullptr) {
    const pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (pid <= 0) continue;
    std::ifstream stat("/proc/" + std::string(entry->d_name) + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    if (close == std::string::npos || line.find('(') == std::string::npos) continue;
    const std::string comm = line.substr(line.find('(') + 1, close - line.find('(') - 1);
    const pid_t parent = static_cast<pid_t>(std::atoi(line.c_str() + close + 4));  // ") S <ppid>"
    if (parent == ::getpid() && name.starts_with(comm)) found.push_back(pid);
  }
  if (proc != nullptr) ::closedir(proc);
  return found;
}

}  // namespace

TEST_CASE("compile worker: the worker reports the nvJitLink version it compiles with") {
  auto version = runner().probe_toolkit();
  REQUIRE(version);
  ToolkitVersion linked;
  nvJitLinkVersion(&linked.major, &linked.minor);
  CHECK(*version == linked);
}

TEST_CASE("compile worker: an sm_90 compile gives an sm_90 cubin, the producer and a compile time") {
  const CompileOutcome outcome = runner().run(job_for(corpus("small_kernel.ptx"), "sm_90"));
  INFO(outcome.message);
  REQUIRE(outcome.kind == OutcomeKind::compiled);
  CHECK(cubin_sm(outcome.image) == 90);
  CHECK(records_arch(outcome.image, "sm_90"));
  CHECK(outcome.producer == "nvJitLink 13.0");
  CHECK(outcome.compile_time_us > 0);
}

TEST_CASE("compile worker: .target sm_90a PTX compiled for sm_90a gives sm_90a code, and for sm_90 a compile error") {
  const std::string ptx = with_target(corpus("small_kernel.ptx"), "sm_90a");
  const CompileOutcome outcome = runner().run(job_for(ptx, "sm_90a"));
  INFO(outcome.message);
  REQUIRE(outcome.kind == OutcomeKind::compiled);
  CHECK(cubin_sm(outcome.image) == 90);
  CHECK(records_arch(outcome.image, "sm_90a"));

  const CompileOutcome mismatch = runner().run(job_for(ptx, "sm_90"));
  CHECK(mismatch.kind == OutcomeKind::compile_error);
  CHECK_THAT(mismatch.message, Catch::Contains("sm_90a") && Catch::Contains("nvJitLinkAddData failed"));
}

TEST_CASE("compile worker: the bytes equal a direct nvJitLink call with the mapped options") {
  for (const char* options : {"", "maxrreg=32", "opt=3;lineinfo=1", "dlcm=ca"}) {
    INFO(options);
    const CompileJob job = job_for(corpus("small_kernel.ptx"), "sm_90", options);
    const CompileOutcome outcome = runner().run(job);
    REQUIRE(outcome.kind == OutcomeKind::compiled);
    CHECK(outcome.image == direct_nvjitlink(job));
  }
}

TEST_CASE("compile worker: garbage PTX is a compile error carrying nvJitLink's log") {
  const CompileOutcome outcome = runner().run(job_for("this is not PTX at all", "sm_90"));
  CHECK(outcome.kind == OutcomeKind::compile_error);
  CHECK_THAT(outcome.message, Catch::Contains("NVJITLINK_ERROR") && Catch::Contains("nvJitLinkAddData failed"));
  CHECK(outcome.producer == "nvJitLink 13.0");
}

TEST_CASE("compile worker: an arch nvJitLink itself rejects is a refusal, not a compile error") {
  CompileJob job = job_for(corpus("small_kernel.ptx"), "sm_90");
  job.arch = "sm_70";  // past prepare_job's table, as with a table that lags the library
  const CompileOutcome outcome = runner().run(job);
  CHECK(outcome.kind == OutcomeKind::refused);
  CHECK(outcome.refusal == RefusalReason::arch);
  CHECK_THAT(outcome.message, Catch::Contains("sm_70"));
}

TEST_CASE("compile worker: a worker killed with SIGKILL mid-compile is reported, and the next compile works") {
  CompileRunner r = runner();
  const CompileJob big = job_for(corpus("mid_kernels.ptx"), "sm_90");
  std::thread killer([] {
    for (int i = 0; i < 400; ++i) {
      const auto workers = children_named("jitcache-compile");
      if (!workers.empty()) {
        std::this_thread::sleep_for(50ms);  // let it get into nvJitLink
        for (pid_t pid : workers) ::kill(pid, SIGKILL);
        return;
      }
      std::this_thread::sleep_for(5ms);
    }
  });
  const CompileOutcome outcome = r.run(big);
  killer.join();
  CHECK(outcome.kind == OutcomeKind::worker_failed);
  CHECK(outcome.failure == WorkerFailure::crashed);
  CHECK_THAT(outcome.message, Catch::Contains("signal 9 (SIGKILL)"));
  CHECK(r.run(job_for(corpus("small_kernel.ptx"), "sm_90")).kind == OutcomeKind::compiled);
}

TEST_CASE("compile worker: 32 concurrent requests for one key compile once and all get identical bytes") {
  auto shared_runner = std::make_shared<CompileRunner>(JITCACHE_COMPILE_WORKER_PATH, CompileLimits{});
  std::atomic<int> stored{0};
  CompileService service(CompileServiceConfig{.max_concurrent = 2}, ToolkitVersion{13, 0}, shared_runner,
                         [&](const jitcache::proto::Digest256&, const CompileOutcomePtr&, const CompileJob&) {
                           ++stored;
                         });
  // Rationale: mid_kernels.ptx takes ~0.6 s, so the 32 submissions, released together, all land
  // while the one compile is still running.
  const std::string ptx = corpus("mid_kernels.ptx");
  const auto key = jitcache::proto::sha256(jitcache::proto::as_bytes(ptx));
  std::latch start(32);
  std::mutex mutex;
  std::condition_variable done;
  std::vector<CompileOutcomePtr> outcomes;
  std::vector<std::thread> clients;
  for (int i = 0; i < 32; ++i) {
    clients.emplace_back([&] {
      start.arrive_and_wait();
      auto ticket = service.submit(key,
                                   CompileInput{"sm_90", 13000, jitcache::proto::default_option_text(),
                                                jitcache::proto::as_bytes(ptx)},
                                   Priority::interactive, [&](CompileOutcomePtr o) {
                                     std::lock_guard lock(mutex);
                                     outcomes.push_back(std::move(o));
                                     done.notify_all();
                                   });
      CHECK(ticket);
    });
  }
  for (auto& c : clients) c.join();
  std::unique_lock lock(mutex);
  REQUIRE(done.wait_for(lock, 60s, [&] { return outcomes.size() == 32; }));
  CHECK(service.counters().compiles == 1);
  CHECK(service.counters().single_flight_joins == 31);
  CHECK(stored == 1);
  for (const auto& o : outcomes) {
    REQUIRE(o->kind == OutcomeKind::compiled);
    CHECK(o->image == outcomes.front()->image);
  }
}
