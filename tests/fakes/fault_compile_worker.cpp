// A stand-in for jitcache-compile that misbehaves on request, so the fault tests can check that the
// CompileRunner turns every kind of worker failure into worker_failed and stays unharmed. The
// production worker has no such hooks. The mode is the job's PTX text up to its first whitespace
// (what follows pads the PTX to a size a test needs):
//
//   crash      read the job, then die of SIGSEGV
//   hang       read the job, then sleep forever (wall-time limit)
//   no-read    sleep forever without reading past the first 4 KiB of the job, which must say
//              "no-read" (the runner must not block writing the rest)
//   spin       read the job, then burn CPU forever (RLIMIT_CPU)
//   memory     allocate and touch memory until an allocation fails, then exit as the real worker
//              does (k_exit_out_of_memory); a compiled reply if 16 GiB fit, i.e. there was no limit
//   garbage    write bytes that are not a reply, exit 0
//   truncated  write the first half of a well-formed reply, exit 0
//   exit7      print a message on stderr and exit 7
//   not-elf    reply "compiled" with a payload that is not an ELF image
//   report     reply compile_error whose log lists the open descriptors and the CPU and address
//              space limits: "fds=0,1,2 cpu=SOFT/HARD as=SOFT/HARD"
//   ok         reply compiled with a tiny fake ELF image
//   slow       sleep the milliseconds of the next word (500 when there is none), then as ok: a
//              compile slow enough for a fleet's herd to meet it, counted by the daemon's `compiles`
//
// `--version` fails like any non-worker (the runner's probe test), unless FAULT_WORKER_VERSION is set
// (e.g. "13.0"): then it prints "nvJitLink <version>" as the real worker does, so a daemon accepts it.
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <string>
#include <vector>

#include <daemon/compile/worker_protocol.hpp>
#include <daemon/compile_worker/stdio_pipes.hpp>

namespace {

namespace compile = jitcache::daemon::compile;
namespace worker = jitcache::daemon::compile_worker;

[[noreturn]] void sleep_forever() {
  for (;;) ::pause();
}

int reply(compile::ReplyStatus status, const std::string& payload) {
  compile::WorkerReply r;
  r.status = status;
  r.nvjitlink_major = 13;
  r.payload.assign(payload.begin(), payload.end());
  return worker::write_all(STDOUT_FILENO, compile::encode_reply(r)) ? 0 : compile::k_exit_io;
}

std::string limit_text(int resource) {
  rlimit limit{};
  ::getrlimit(resource, &limit);
  const auto text = [](rlim_t v) { return v == RLIM_INFINITY ? std::string("inf") : std::to_string(v); };
  return text(limit.rlim_cur) + "/" + text(limit.rlim_max);
}

std::string report() {
  std::vector<int> open;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return "cannot list /proc/self/fd";
  while (const dirent* entry = ::readdir(dir)) {
    const int fd = std::atoi(entry->d_name);
    // Skip "." and "..", and the listing's own descriptor, which was not inherited.
    if (entry->d_name[0] != '.' && fd != ::dirfd(dir)) open.push_back(fd);
  }
  ::closedir(dir);
  std::sort(open.begin(), open.end());
  std::string fds;
  for (int fd : open) fds += (fds.empty() ? "" : ",") + std::to_string(fd);
  return "fds=" + fds + " cpu=" + limit_text(RLIMIT_CPU) + " as=" + limit_text(RLIMIT_AS);
}

int memory_hog() {
  std::vector<char*> blocks;
  constexpr std::size_t k_block = 64u << 20;
  try {
    for (std::size_t total = 0; total < (std::size_t{16} << 30); total += k_block) {
      char* block = new char[k_block];
      block[0] = 1;  // address space is what RLIMIT_AS limits; touching it all would need the RAM
      blocks.push_back(block);
    }
  } catch (const std::bad_alloc&) {
    return compile::k_exit_out_of_memory;
  }
  return reply(compile::ReplyStatus::compiled,
               "\x7f"
               "ELF: 16 GiB fit, there was no memory limit");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--version") == 0) {
    const char* version = std::getenv("FAULT_WORKER_VERSION");
    if (version == nullptr) return compile::k_exit_bad_job;
    const std::string line = std::string("nvJitLink ") + version + "\n";
    return worker::write_all(STDOUT_FILENO, jitcache::proto::as_bytes(line)) ? 0 : compile::k_exit_io;
  }
  std::vector<std::uint8_t> head(4096);
  std::size_t got = 0;
  while (got < head.size()) {
    const ssize_t n = ::read(STDIN_FILENO, head.data() + got, head.size() - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  head.resize(got);
  constexpr std::string_view k_no_read = "no-read";
  if (std::search(head.begin(), head.end(), k_no_read.begin(), k_no_read.end()) != head.end()) sleep_forever();
  auto rest = worker::read_all(STDIN_FILENO, std::size_t{1} << 30);
  if (!rest) return compile::k_exit_io;
  head.insert(head.end(), rest->begin(), rest->end());
  auto job = compile::decode_job(head);
  if (!job) return compile::k_exit_bad_job;
  const auto word_end = std::find_if(job->ptx.begin(), job->ptx.end(), [](std::uint8_t c) { return std::isspace(c); });
  const std::string mode(job->ptx.begin(), word_end);
  if (mode == "crash") ::raise(SIGSEGV);
  if (mode == "hang") sleep_forever();
  if (mode == "spin") {
    volatile unsigned long spins = 0;
    for (;;) spins = spins + 1;
  }
  if (mode == "memory") return memory_hog();
  if (mode == "garbage") {
    const std::string junk = "this is not a jitcache worker reply\n";
    return worker::write_all(STDOUT_FILENO, jitcache::proto::as_bytes(junk)) ? 0 : 1;
  }
  if (mode == "truncated") {
    const auto bytes = compile::encode_reply(
        compile::WorkerReply{compile::ReplyStatus::compiled, 13, 0, 1, 0, std::vector<std::uint8_t>(1000, 0x7f)});
    return worker::write_all(STDOUT_FILENO, std::span(bytes).first(bytes.size() / 2)) ? 0 : 1;
  }
  if (mode == "exit7") {
    const std::string message = "fault worker: exiting with 7 on request\n";
    [[maybe_unused]] auto ignored = ::write(STDERR_FILENO, message.data(), message.size());
    return 7;
  }
  if (mode == "not-elf") return reply(compile::ReplyStatus::compiled, "MZ this is no cubin");
  if (mode == "report") return reply(compile::ReplyStatus::compile_error, report());
  if (mode == "slow") {
    auto at = word_end;
    while (at != job->ptx.end() && (*at == ' ' || *at == '\t')) ++at;
    long ms = 0;
    while (at != job->ptx.end() && std::isdigit(*at)) ms = ms * 10 + (*at++ - '0');
    ::usleep(static_cast<useconds_t>((ms > 0 ? ms : 500) * 1000));
    return reply(compile::ReplyStatus::compiled, std::string("\x7f"
                                                             "ELF fake image"));
  }
  if (mode == "ok")
    return reply(compile::ReplyStatus::compiled, std::string("\x7f"
                                                             "ELF fake image"));
  return reply(compile::ReplyStatus::compile_error, "fault worker: unknown mode \"" + mode + "\"");
}
