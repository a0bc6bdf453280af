#include <tests/bench/eviction_trace.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>
#include <unordered_set>

namespace jitcache::bench {

namespace {

// SplitMix64: small, fast, and the same sequence on every platform.
class Generator {
 public:
  explicit Generator(std::uint64_t seed) : m_state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (m_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // In [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double standard_normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]: log() stays finite
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }
  std::uint64_t below(std::uint64_t n) { return next() % n; }

 private:
  std::uint64_t m_state;
};

// Cumulative Zipf weights of ranks 1..n: rank r has weight 1 / r^exponent.
std::vector<double> zipf_cdf(std::uint32_t n, double exponent) {
  std::vector<double> cdf(n);
  double sum = 0;
  for (std::uint32_t r = 0; r < n; ++r) {
    sum += 1.0 / std::pow(static_cast<double>(r + 1), exponent);
    cdf[r] = sum;
  }
  for (double& c : cdf) c /= sum;
  return cdf;
}

// The requests: ranks drawn from the Zipf law, each rank mapped to its entry of the moment; at each
// phase boundary a `churn` share of the ranks (chosen at random) get a new entry from `make_entry`.
Trace popularity_trace(std::string name, std::uint32_t ranks, const PopularitySpec& spec, Generator& generator,
                       const std::function<TraceEntry(std::uint32_t rank)>& make_entry) {
  Trace trace;
  trace.name = std::move(name);
  std::vector<std::uint32_t> entry_of_rank(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r) {
    trace.entries.push_back(make_entry(r));
    entry_of_rank[r] = r;
  }
  // Popularity independent of size and cost: shuffle which entry holds which rank.
  for (std::uint32_t i = ranks; i > 1; --i) {
    std::swap(entry_of_rank[i - 1], entry_of_rank[generator.below(i)]);
  }
  const std::vector<double> cdf = zipf_cdf(ranks, spec.zipf_exponent);
  const std::uint64_t phase_length = std::max<std::uint64_t>(1, spec.requests / std::max(1u, spec.phases));
  const auto churned = static_cast<std::uint32_t>(spec.churn * ranks);
  trace.requests.reserve(spec.requests);
  for (std::uint64_t i = 0; i < spec.requests; ++i) {
    if (i > 0 && i % phase_length == 0) {
      for (std::uint32_t k = 0; k < churned; ++k) {
        const auto rank = static_cast<std::uint32_t>(generator.below(ranks));
        entry_of_rank[rank] = static_cast<std::uint32_t>(trace.entries.size());
        trace.entries.push_back(make_entry(entry_of_rank[rank] % ranks));
      }
    }
    const double u = generator.uniform();
    const auto rank = static_cast<std::uint32_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
    trace.requests.push_back(entry_of_rank[std::min(rank, ranks - 1)]);
  }
  return trace;
}

}  // namespace

Trace synthetic_trace(std::uint32_t ranks, const PopularitySpec& spec) {
  Generator generator(spec.seed);
  auto make_entry = [&](std::uint32_t) {
    // Log-normal size: median 64 KiB, sigma 1.3 (95% within 5 KB .. 830 KB), within 4 KiB .. 8 MiB.
    const double size = std::clamp(65536.0 * std::exp(1.3 * generator.standard_normal()), 4096.0, 8388608.0);
    // A fixed part (process and compiler start) and a slightly sub-linear part in the size, with a
    // log-normal spread (sigma 0.5) for how hard the code is; within 20 ms .. 7 s.
    const double compile_us =
        std::clamp((15'000.0 + 3.0 * std::pow(size, 0.95)) * std::exp(0.5 * generator.standard_normal()), 20'000.0,
                   7'000'000.0);
    return TraceEntry{static_cast<std::uint64_t>(size), static_cast<std::uint64_t>(compile_us), -1};
  };
  return popularity_trace("synthetic", ranks, spec, generator, make_entry);
}

Trace corpus_trace(const std::vector<CorpusModule>& modules, std::uint32_t variants, const PopularitySpec& spec) {
  Generator generator(spec.seed);
  const auto ranks = static_cast<std::uint32_t>(modules.size()) * variants;
  auto make_entry = [&](std::uint32_t rank) {
    const auto module = static_cast<int>(rank % modules.size());
    const CorpusModule& m = modules[static_cast<std::size_t>(module)];
    return TraceEntry{m.stored_bytes, m.compile_us, module};
  };
  return popularity_trace("corpus", ranks, spec, generator, make_entry);
}

std::uint64_t working_set_bytes(const Trace& trace) {
  std::unordered_set<std::uint32_t> seen(trace.requests.begin(), trace.requests.end());
  std::uint64_t bytes = 0;
  for (std::uint32_t index : seen) bytes += trace.entries[index].stored_bytes;
  return bytes;
}

}  // namespace jitcache::bench
