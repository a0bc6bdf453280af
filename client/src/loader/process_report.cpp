#include <client/src/loader/process_report.hpp>

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include <client/src/loader/client_runtime.hpp>
#include <client/src/loader/report_destination.hpp>
#include <client/src/loader/report_json.hpp>
#include <client/src/loader/stderr_line.hpp>
#include <common/client_environment.hpp>

namespace jitcache::client::loader {

namespace {

// Rationale: the records are allocated in chunks as loads arrive, so a process with a few loads
// holds a few records, not the whole limit.
constexpr std::size_t k_chunk_size = 64;
constexpr std::size_t k_chunk_count = ProcessReport::k_max_loads / k_chunk_size;
static_assert(k_chunk_count * k_chunk_size == ProcessReport::k_max_loads);
constexpr std::size_t k_outcome_count = JITCACHE_OUTCOME_UNCACHED_FALLBACK + 1;

struct Slot {
  std::atomic<bool> ready{false};
  ReportedLoad load;
};

enum State : int { k_unknown, k_off, k_on };

// Trivially destructible and constant-initialised, so a load on another thread during exit never
// meets a destroyed object.
struct Report {
  std::atomic<int> state{k_unknown};
  std::atomic<bool> registering{false};
  std::atomic<bool> written{false};
  std::atomic<bool> quiet{false};
  char pattern[4096] = {};  // JITCACHE_REPORT as read at the first load
  std::atomic<std::uint64_t> next{0};
  std::atomic<std::uint64_t> outcomes[k_outcome_count] = {};
  std::atomic<Slot*> chunks[k_chunk_count] = {};
  // Set in a forked child (by the fork handler, while it is the only thread).
  pid_t forked_from = 0;
  jitcache_counters counters_at_fork{};
};

constinit Report g_report;

Slot* slot_at(std::size_t index) {
  std::atomic<Slot*>& chunk = g_report.chunks[index / k_chunk_size];
  Slot* slots = chunk.load(std::memory_order_acquire);
  if (slots == nullptr) {
    Slot* fresh = new (std::nothrow) Slot[k_chunk_size];
    if (fresh == nullptr) return nullptr;
    if (chunk.compare_exchange_strong(slots, fresh, std::memory_order_acq_rel)) {
      slots = fresh;
    } else {
      delete[] fresh;  // another load allocated it first; `slots` now holds that one
    }
  }
  return slots + index % k_chunk_size;
}

bool env_flag(const char* name) { return common::client_env_flag(name, false); }

std::string read_small_file(const char* path) {
  std::string text;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0 && text.size() < 65536) {
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

std::string program_name() {
  const std::string cmdline = read_small_file("/proc/self/cmdline");
  return cmdline.substr(0, cmdline.find('\0'));
}

std::string comm_name() {
  std::string comm = read_small_file("/proc/self/comm");
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  return comm;
}

std::string exe_path() {
  char buffer[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

// The counters since the fork that started this report (all of them in a process that is no
// fork child). A reset by jitcache_configure() since then leaves a counter below its value at the
// fork: it is then taken as it is.
jitcache_counters counters_since_fork() {
  jitcache_counters now = ClientRuntime::instance().counters().snapshot();
  if (g_report.forked_from == 0) return now;
  for (const CounterField& counter : counter_fields()) {
    const std::uint64_t base = g_report.counters_at_fork.*counter.field;
    std::uint64_t& value = now.*counter.field;
    if (value >= base) value -= base;
  }
  return now;
}

void warn_unwritten(const std::string& path, int error) {
  if (g_report.quiet.load() || env_flag("JITCACHE_QUIET")) return;
  const std::string line = "jitcache: cannot write the load report (JITCACHE_REPORT) to " + path + ": " +
                           std::strerror(error) + " (JITCACHE_QUIET=1 silences this)\n";
  write_stderr_line(line);  // only to the program's own stderr, never with a signal
}

// The report's path for this process. Rationale: in a child of fork() a pattern without %p names
// the parent's file, and the child's report would replace the parent's: the child writes
// "<path>.<pid>" beside it instead (docs/process-report.md). A path that names something other than
// a regular file (/dev/null, a FIFO, /dev/stderr) is written in place by the child as by the
// parent: nothing is ever created beside a device.
std::string report_path(pid_t pid) {
  std::string path = expand_report_path(g_report.pattern, pid);
  if (g_report.forked_from != 0 && std::strstr(g_report.pattern, "%p") == nullptr) {
    struct stat named {};
    if (::stat(path.c_str(), &named) == 0 && !S_ISREG(named.st_mode)) return path;
    path += "." + std::to_string(pid);
  }
  return path;
}

void warn_pattern_too_long(std::size_t length) {
  if (env_flag("JITCACHE_QUIET")) return;
  write_stderr_line("jitcache: JITCACHE_REPORT is " + std::to_string(length) + " characters long, longer than " +
                    std::to_string(sizeof g_report.pattern - 1) +
                    ": no load report is written (JITCACHE_QUIET=1 silences this)\n");
}

void write_at_exit() noexcept {
  if (g_report.written.exchange(true)) return;
  try {
    const std::uint64_t claimed = g_report.next.load();
    // A forked child that loaded nothing of its own has nothing to report (its parent reports
    // what was loaded before the fork).
    if (g_report.forked_from != 0 && claimed == 0) return;
    const std::size_t slots = static_cast<std::size_t>(std::min<std::uint64_t>(claimed, ProcessReport::k_max_loads));
    std::vector<const ReportedLoad*> kept;
    kept.reserve(slots);
    for (std::size_t i = 0; i < slots; ++i) {
      const Slot* slot = g_report.chunks[i / k_chunk_size].load(std::memory_order_acquire);
      if (slot == nullptr) continue;
      slot += i % k_chunk_size;
      if (slot->ready.load(std::memory_order_acquire)) kept.push_back(&slot->load);
    }
    ReportSnapshot snapshot;
    snapshot.program = program_name();
    snapshot.comm = comm_name();
    snapshot.exe = exe_path();
    snapshot.pid = ::getpid();
    if (g_report.forked_from != 0) snapshot.forked_from = g_report.forked_from;
    snapshot.counters = counters_since_fork();
    for (std::size_t i = 0; i < k_outcome_count; ++i) snapshot.outcomes[i] = g_report.outcomes[i].load();
    snapshot.loads = kept;
    snapshot.dropped = claimed - kept.size();
    snapshot.limit = ProcessReport::k_max_loads;
    const std::string path = report_path(snapshot.pid);
    if (const int error = write_report_destination(path, render_report(snapshot)); error != 0) {
      warn_unwritten(path, error);
    }
  } catch (...) {
    // Out of memory at exit: no report, and the program's exit goes on as it would have.
  }
}

// In the child of a fork(), where the calling thread is the only one: the report starts empty.
void start_over_in_child() {
  g_report.forked_from = ::getppid();
  g_report.counters_at_fork = ClientRuntime::instance().counters().snapshot();
  const std::uint64_t claimed = g_report.next.exchange(0);
  const std::size_t slots = static_cast<std::size_t>(std::min<std::uint64_t>(claimed, ProcessReport::k_max_loads));
  for (std::size_t i = 0; i < slots; ++i) {
    Slot* chunk = g_report.chunks[i / k_chunk_size].load();
    if (chunk != nullptr) chunk[i % k_chunk_size].ready.store(false);
  }
  for (auto& count : g_report.outcomes) count.store(0);
}

// Reads JITCACHE_REPORT at the first load and, when it names a path, registers the handlers.
// Concurrent first loads all record; one of them registers.
bool report_enabled() {
  const int state = g_report.state.load(std::memory_order_acquire);
  if (state != k_unknown) return state == k_on;
  const char* pattern = ::secure_getenv("JITCACHE_REPORT");  // never a file a caller names for a set-user-ID process
  if (pattern == nullptr || *pattern == '\0') {
    g_report.state.store(k_off);
    return false;
  }
  if (std::strlen(pattern) >= sizeof g_report.pattern) {
    // No path that long can be opened (PATH_MAX is 4096 with its NUL): said once, not silently.
    if (g_report.state.exchange(k_off) != k_off) warn_pattern_too_long(std::strlen(pattern));
    return false;
  }
  if (g_report.registering.exchange(true)) return true;
  std::strcpy(g_report.pattern, pattern);
  const bool registered = std::atexit(write_at_exit) == 0;
  if (registered) ::pthread_atfork(nullptr, nullptr, start_over_in_child);
  g_report.state.store(registered ? k_on : k_off, std::memory_order_release);
  return registered;
}

}  // namespace

void ProcessReport::note(const jitcache_load_info& info, std::string_view entry_point, bool quiet) {
  if (!report_enabled()) return;
  if (quiet) g_report.quiet.store(true);
  const auto outcome = static_cast<std::size_t>(info.outcome);
  if (outcome < k_outcome_count) g_report.outcomes[outcome].fetch_add(1);
  const std::uint64_t index = g_report.next.fetch_add(1);
  if (index >= k_max_loads) return;
  Slot* slot = slot_at(static_cast<std::size_t>(index));
  if (slot == nullptr) return;  // no memory: counted as dropped
  const std::size_t length = std::min(entry_point.size(), sizeof slot->load.entry_point - 1);
  std::memcpy(slot->load.entry_point, entry_point.data(), length);
  slot->load.entry_point[length] = '\0';
  slot->load.info = info;
  slot->ready.store(true, std::memory_order_release);
}

std::string expand_report_path(std::string_view pattern, pid_t pid) {
  std::string path;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'p') {
      path += std::to_string(pid);
      ++i;
    } else if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == '%') {
      path += '%';
      ++i;
    } else {
      path += pattern[i];
    }
  }
  return path;
}

}  // namespace jitcache::client::loader
