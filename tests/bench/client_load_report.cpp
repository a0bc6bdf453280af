#include <tests/bench/client_load_report.hpp>

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace jitcache::bench {

namespace {

constexpr double k_ns_per_ms = 1e6;

std::string printf_string(const char* pattern, ...) __attribute__((format(printf, 1, 2)));
std::string printf_string(const char* pattern, ...) {
  char text[512];
  va_list args;
  va_start(args, pattern);
  std::vsnprintf(text, sizeof(text), pattern, args);
  va_end(args);
  return text;
}

std::string size_text(std::size_t bytes) {
  const auto value = static_cast<double>(bytes);
  if (value >= 1024.0 * 1024.0) return printf_string("%.1f MB", value / (1024.0 * 1024.0));
  if (value >= 1024.0) return printf_string("%.1f KB", value / 1024.0);
  return printf_string("%zu B", bytes);
}

void print_row(std::ostream& out, const char* label, const Samples& samples) {
  const auto spread = spread_of(samples);
  if (!spread) {
    out << printf_string("  %-44s %3s %12s %10s %10s\n", label, "0", "-", "-", "-");
    return;
  }
  out << printf_string("  %-44s %3zu %12.3f %10.3f %10.3f\n", label, spread->n, spread->median_ms, spread->min_ms,
                       spread->max_ms);
}

std::optional<double> median_ms(const Samples& samples) {
  const auto spread = spread_of(samples);
  return spread ? std::optional<double>(spread->median_ms) : std::nullopt;
}

// Rationale: targets compare medians; a single slow sample (a page-cache miss, a busy CPU) should
// not decide them, and min/max are printed beside them for that reason.
TargetCheck at_most_above(const ModuleFigures& f, const Samples& base, const char* base_name, double limit_ms) {
  TargetCheck check{f.name, printf_string("hit <= %s + %.1f ms", base_name, limit_ms), "-", std::nullopt};
  const auto hit = median_ms(f.hit);
  const auto other = median_ms(base);
  if (!hit || !other) return check;
  check.measured = printf_string("hit - %s = %+.3f ms (%.3f vs %.3f ms)", base_name, *hit - *other, *hit, *other);
  check.met = *hit - *other <= limit_ms;
  return check;
}

TargetCheck at_most_times(const ModuleFigures& f, const Samples& base, const char* base_name, double factor) {
  TargetCheck check{f.name, printf_string("hit <= %.1fx %s", factor, base_name), "-", std::nullopt};
  const auto hit = median_ms(f.hit);
  const auto other = median_ms(base);
  if (!hit || !other || *other <= 0) return check;
  check.measured = printf_string("%.2fx (%.3f vs %.3f ms)", *hit / *other, *hit, *other);
  check.met = *hit <= factor * *other;
  return check;
}

}  // namespace

std::optional<Spread> spread_of(Samples samples) {
  if (samples.empty()) return std::nullopt;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  const double middle = n % 2 == 1
                            ? static_cast<double>(samples[n / 2])
                            : (static_cast<double>(samples[n / 2 - 1]) + static_cast<double>(samples[n / 2])) / 2;
  return Spread{n, middle / k_ns_per_ms, static_cast<double>(samples.front()) / k_ns_per_ms,
                static_cast<double>(samples.back()) / k_ns_per_ms};
}

void print_module(std::ostream& out, const ModuleFigures& f) {
  out << f.name << ": " << size_text(f.ptx_bytes) << " PTX, " << f.kernels << (f.kernels == 1 ? " kernel" : " kernels")
      << ", cached cubin " << size_text(f.cubin_bytes) << "; the priming load was " << f.miss_outcome
      << printf_string(" (%.1f ms; %llu LOOKUP%s, ns_lookup %.3f ms)", static_cast<double>(f.miss_ns) / k_ns_per_ms,
                       static_cast<unsigned long long>(f.miss_lookups), f.miss_lookups == 1 ? "" : "s",
                       static_cast<double>(f.miss_ns_lookup) / k_ns_per_ms)
      << "\n"
      << printf_string("  %-44s %3s %12s %10s %10s\n", "path (ms from the call to a usable CUmodule)", "n", "median",
                       "min", "max");
  print_row(out, "hit: jitcache_module_load_data", f.hit);
  out << printf_string(
      "    %zu of %zu hits from the daemon's published copy, the rest over the socket; %zu published copies refused\n",
      f.hits_published, f.hit.size(), f.published_rejects);
  print_row(out, "hit over the socket (JITCACHE_PUBLISHED=0)", f.hit_socket);
  print_row(out, "(a) cuModuleLoadData, cubin in memory", f.cubin);
  print_row(out, "(b) cuModuleLoadData(PTX), driver cache warm", f.driver_warm);
  print_row(out, "(c) cuModuleLoadData(PTX), cold JIT", f.driver_cold);
  print_row(out, "(d) fallback, no daemon: whole call", f.fallback);
  print_row(out, "    of which ns_key + ns_lookup", f.fallback_overhead);
  out << "  hit steps:\n";
  print_row(out, "    ns_key (device, driver, digest, options)", f.hit_key);
  print_row(out, "    ns_lookup (connect, file or LOOKUP, checks)", f.hit_lookup);
  print_row(out, "    ns_load (cuModuleLoadData)", f.hit_load);
  print_row(out, "    ns_setup (first use: settings, driver)", f.hit_setup);
  print_row(out, "    ns_classify (PTX, cubin or fat binary)", f.hit_classify);
  print_row(out, "    ns_total (the whole call, as recorded)", f.hit_total);
  for (const auto& failure : f.failures) out << "  FAILED: " << failure << "\n";
  out << std::endl;
}

std::vector<TargetCheck> check_targets(const ModuleFigures& f) {
  std::vector<TargetCheck> checks;
  if (f.name == "cub_kernels.ptx") {
    checks.push_back(at_most_times(f, f.driver_warm, "(b) warm driver cache", 0.5));
    checks.push_back(at_most_above(f, f.cubin, "(a)", 2.5));
  }
  if (f.name == "small_kernel.ptx") checks.push_back(at_most_above(f, f.cubin, "(a)", 0.3));
  TargetCheck dead{f.name, "dead-daemon overhead (ns_key + ns_lookup) < 5 ms", "-", std::nullopt};
  if (const auto overhead = median_ms(f.fallback_overhead)) {
    dead.measured = printf_string("%.3f ms", *overhead);
    dead.met = *overhead < 5.0;
  }
  checks.push_back(dead);
  return checks;
}

void print_targets(std::ostream& out, const std::vector<TargetCheck>& checks) {
  out << "Targets (medians; reported, not asserted):\n";
  for (const auto& check : checks) {
    const char* verdict = !check.met ? "no figure" : *check.met ? "met" : "MISSED";
    out << printf_string("  %-18s %-46s %-44s %s\n", check.module.c_str(), check.target.c_str(), check.measured.c_str(),
                         verdict);
  }
}

}  // namespace jitcache::bench
