#include <tests/bench/lookup_report.hpp>

#include <cstdarg>
#include <cstdio>

namespace jitcache::bench {

namespace {

constexpr double k_kib = 1024.0;
constexpr double k_mib = 1024.0 * 1024.0;

std::string printf_string(const char* pattern, ...) __attribute__((format(printf, 1, 2)));
std::string printf_string(const char* pattern, ...) {
  char text[512];
  va_list args;
  va_start(args, pattern);
  std::vsnprintf(text, sizeof(text), pattern, args);
  va_end(args);
  return text;
}

std::string optional_figure(const std::optional<double>& value, const char* pattern) {
  return value ? printf_string(pattern, *value) : std::string("-");
}

nlohmann::json optional_json(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json server_json(const ServerFigures& figures) {
  const auto& load = figures.load;
  return {
      {"requests", load.requests},
      {"seconds", load.seconds},
      {"ops_per_second", load.requests_per_second()},
      {"failed_clients", load.failures},
      {"first_failure", load.first_failure},
      {"latency_us",
       {{"mean", load.latency.mean_us},
        {"p50", load.latency.p50_us},
        {"p99", load.latency.p99_us},
        {"p999", load.latency.p999_us},
        {"max", load.latency.max_us}}},
      {"server_cpu_us_per_request", optional_json(figures.server_cpu_us_per_request)},
      {"server_voluntary_switches_per_request", optional_json(figures.server_switches_per_request)},
      {"client_cpu_us_per_request", optional_json(figures.client_cpu_us_per_request)},
  };
}

}  // namespace

std::string format_size(std::size_t bytes) {
  const auto value = static_cast<double>(bytes);
  if (value >= k_mib) return printf_string("%.1f MB", value / k_mib);
  if (value >= k_kib) return printf_string("%.0f KB", value / k_kib);
  return printf_string("%zu B", bytes);
}

void print_run(std::ostream& out, const RunDescription& run) {
  out << "machine:  " << run.machine.cpu_model << ", " << run.machine.online_cpus << " CPUs online ("
      << run.machine.usable_cpus << " usable), " << run.machine.memory_mib << " MiB, " << run.machine.kernel
      << printf_string(", load average %.2f at start", run.machine.load_average) << "\n"
      << "jitcached: " << run.daemon_version << " (" << run.daemon << ")\n"
      << "redis:    " << (run.redis_version.empty() ? "off (--no-redis)" : run.redis_version) << "\n"
      << "method:   " << run.keys_per_size << " keys per size spread over the clients, "
      << printf_string("%.1f", run.warm_up_seconds) << " s warm-up, " << printf_string("%.1f", run.seconds)
      << " s measured per cell; one connection per client thread, one request at a time\n"
      << "command:  " << run.command_line << "\n\n";
}

void print_table_header(std::ostream& out) {
  out << printf_string("%-8s %7s | %12s %9s %9s | %12s %9s %9s | %9s %9s\n", "size", "clients", "jitcache/s", "p50 us",
                       "p99 us", "redis/s", "p50 us", "p99 us", "ops j/r", "p99 j/r")
      << std::string(111, '-') << "\n";
}

void print_table_row(std::ostream& out, const CellFigures& cell) {
  const auto& j = cell.jitcache.load;
  std::string redis_part = printf_string("%12s %9s %9s", "-", "-", "-");
  if (cell.redis) {
    const auto& r = cell.redis->load;
    redis_part = printf_string("%12.0f %9.1f %9.1f", r.requests_per_second(), r.latency.p50_us, r.latency.p99_us);
  }
  out << printf_string("%-8s %7u | %12.0f %9.1f %9.1f | %s | %9s %9s", format_size(cell.image_size).c_str(),
                       cell.clients, j.requests_per_second(), j.latency.p50_us, j.latency.p99_us, redis_part.c_str(),
                       optional_figure(cell.throughput_ratio(), "%.2fx").c_str(),
                       optional_figure(cell.p99_ratio(), "%.2fx").c_str());
  if (j.failures != 0) out << "  jitcache FAILED (" << j.failures << " clients): " << j.first_failure;
  if (cell.redis && cell.redis->load.failures != 0) {
    out << "  redis FAILED (" << cell.redis->load.failures << " clients): " << cell.redis->load.first_failure;
  }
  out << std::endl;
}

void print_cpu_table(std::ostream& out, const std::vector<CellFigures>& cells) {
  out << "\nCost per request in the measurement window: server CPU us, server sleeps (voluntary context\n"
      << "switches; hand-offs between server threads add to them), client CPU us (this process)\n"
      << printf_string("%-8s %7s | %10s %8s %10s | %10s %8s %10s\n", "size", "clients", "jitcached", "sleeps",
                       "clients", "redis", "sleeps", "clients")
      << std::string(85, '-') << "\n";
  const auto costs = [](const ServerFigures& figures) {
    return printf_string("%10s %8s %10s", optional_figure(figures.server_cpu_us_per_request, "%.1f").c_str(),
                         optional_figure(figures.server_switches_per_request, "%.2f").c_str(),
                         optional_figure(figures.client_cpu_us_per_request, "%.1f").c_str());
  };
  for (const auto& cell : cells) {
    const std::string redis_part = cell.redis ? costs(*cell.redis) : printf_string("%10s %8s %10s", "-", "-", "-");
    out << printf_string("%-8s %7u | %s | %s\n", format_size(cell.image_size).c_str(), cell.clients,
                         costs(cell.jitcache).c_str(), redis_part.c_str());
  }
}

void print_targets(std::ostream& out, const std::vector<TargetCheck>& checks) {
  out << "\ntargets (reported, not asserted)\n";
  for (const auto& check : checks) {
    out << printf_string("  %-56s %-10s %s\n", check.description.c_str(), check.measured.c_str(),
                         verdict(check).c_str());
  }
}

nlohmann::json to_json(const RunDescription& run, const std::vector<CellFigures>& cells,
                       const std::vector<TargetCheck>& checks) {
  nlohmann::json json;
  json["benchmark"] = "lookup_vs_redis_get";
  json["machine"] = {{"cpu_model", run.machine.cpu_model},     {"online_cpus", run.machine.online_cpus},
                     {"usable_cpus", run.machine.usable_cpus}, {"memory_mib", run.machine.memory_mib},
                     {"kernel", run.machine.kernel},           {"load_average_at_start", run.machine.load_average}};
  json["settings"] = {
      {"command_line", run.command_line},   {"daemon", run.daemon},   {"daemon_version", run.daemon_version},
      {"redis_version", run.redis_version}, {"seconds", run.seconds}, {"warm_up_seconds", run.warm_up_seconds},
      {"keys_per_size", run.keys_per_size}};
  json["cells"] = nlohmann::json::array();
  for (const auto& cell : cells) {
    json["cells"].push_back({{"image_bytes", cell.image_size},
                             {"clients", cell.clients},
                             {"jitcache", server_json(cell.jitcache)},
                             {"redis", cell.redis ? server_json(*cell.redis) : nlohmann::json(nullptr)},
                             {"ratio_ops", optional_json(cell.throughput_ratio())},
                             {"ratio_p99", optional_json(cell.p99_ratio())}});
  }
  json["targets"] = nlohmann::json::array();
  for (const auto& check : checks) {
    json["targets"].push_back(
        {{"description", check.description}, {"measured", check.measured}, {"result", verdict(check)}});
  }
  return json;
}

}  // namespace jitcache::bench
