#include <daemon/startup/descriptor_limit.hpp>

#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <spdlog/spdlog.h>

namespace jitcache::daemon::startup {

namespace {

// Rationale: what the server opens after the plan is made, per thread: an io_context's epoll
// descriptor, its eventfd and timerfd, the worker's duplicate of the listening socket, and its
// SQLite read connection's database and WAL files; per compile: the worker's three pipes and its
// pidfd; the diagnosis lane's read connection (database and WAL: daemon/server/lanes.hpp); and a
// margin for the metrics endpoint, the log and SQLite's temporary files.
constexpr std::uint64_t k_per_worker_thread = 6;
constexpr std::uint64_t k_diagnosis_lane = 2;
constexpr std::uint64_t k_per_compile_job = 4;
constexpr std::uint64_t k_margin = 32;

std::uint64_t open_descriptors() {
  std::error_code ec;
  std::uint64_t count = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) ++count;
  return count;
}

}  // namespace

std::uint64_t raise_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    spdlog::warn("cannot read the descriptor limit: {}", std::strerror(errno));
    return 1024;
  }
  const rlim_t before = limit.rlim_cur;
  if (limit.rlim_cur != limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) {
      limit = raised;
    } else {
      spdlog::warn("cannot raise the descriptor limit from {} to the hard limit {}: {}", before, limit.rlim_max,
                   std::strerror(errno));
    }
  }
  if (limit.rlim_cur != before) {
    spdlog::info("descriptor limit raised from {} to {} (the hard limit)", before, limit.rlim_cur);
  } else {
    spdlog::info("descriptor limit {} (hard limit {})", limit.rlim_cur, limit.rlim_max);
  }
  return limit.rlim_cur;
}

server::DescriptorPlan plan_descriptors_at_start(const config::Config& config, unsigned compile_jobs,
                                                 std::uint64_t limit) {
  const std::uint64_t reserved = open_descriptors() + k_per_worker_thread * config.worker_threads + k_diagnosis_lane +
                                 k_per_compile_job * compile_jobs + k_margin;
  const server::DescriptorPlan plan = server::plan_descriptors(limit, reserved, config.max_connections);
  if (plan.max_connections < config.max_connections) {
    spdlog::warn(
        "max_connections {} lowered to {}: the descriptor limit {} leaves room for no more beside the "
        "daemon's own {} and the images served by descriptor; raise LimitNOFILE (or ulimit -n)",
        config.max_connections, plan.max_connections, limit, reserved);
  }
  spdlog::info("descriptors: {} for the daemon's own files, up to {} connections, up to {} images kept as memfds",
               reserved, plan.max_connections, plan.cached_image_descriptors);
  return plan;
}

}  // namespace jitcache::daemon::startup
