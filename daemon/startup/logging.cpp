#include <daemon/startup/logging.hpp>

#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace jitcache::daemon::startup {

namespace {
// Rationale: 3 × 10 MiB keeps weeks of PUT/REMOVE lines on a busy host and bounds the disk used.
constexpr std::size_t k_log_file_bytes = 10 << 20;
constexpr std::size_t k_log_files = 3;

void install(std::shared_ptr<spdlog::logger> logger, const std::string& level) {
  logger->set_level(spdlog::level::from_str(level));
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e [%l] %v");
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
}
}  // namespace

void log_to_stderr(const std::string& level) {
  install(std::make_shared<spdlog::logger>("jitcached", std::make_shared<spdlog::sinks::stderr_sink_mt>()), level);
}

void log_to_file(const std::string& path, const std::string& level) {
  auto sink = std::make_shared<spdlog::sinks::rotating_file_sink_mt>(path, k_log_file_bytes, k_log_files);
  install(std::make_shared<spdlog::logger>("jitcached", std::move(sink)), level);
}

}  // namespace jitcache::daemon::startup
