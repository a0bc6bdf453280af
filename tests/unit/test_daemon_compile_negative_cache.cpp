// NegativeCache (daemon/compile/negative_cache.hpp): a failure is served for its TTL and not after,
// the cache stays within its size, and only failures that say something about the request count.
#include <catch2/catch.hpp>

#include <daemon/compile/negative_cache.hpp>

namespace {

using namespace jitcache::daemon::compile;
using namespace std::chrono_literals;
using Clock = NegativeCache::Clock;

jitcache::proto::Digest256 key(std::uint8_t n) {
  jitcache::proto::Digest256 d;
  d.bytes[0] = n;
  return d;
}

CompileOutcome compile_error(const std::string& log) {
  CompileOutcome outcome;
  outcome.kind = OutcomeKind::compile_error;
  outcome.message = log;
  return outcome;
}

}  // namespace

TEST_CASE("compile negative cache: a failure is served until its TTL has passed, then forgotten") {
  NegativeCache cache(60s, 16);
  const auto t0 = Clock::now();
  cache.remember(key(1), compile_error("ptxas fatal"), t0);
  auto hit = cache.find(key(1), t0 + 59s);
  REQUIRE(hit);
  CHECK(hit->message == "ptxas fatal");
  CHECK(hit->from_negative_cache);
  CHECK_FALSE(cache.find(key(2), t0));
  CHECK_FALSE(cache.find(key(1), t0 + 60s));
  CHECK(cache.size() == 0);
}

TEST_CASE("compile negative cache: a TTL of 0 remembers nothing") {
  NegativeCache cache(0ms, 16);
  cache.remember(key(1), compile_error("x"), Clock::now());
  CHECK_FALSE(cache.find(key(1), Clock::now()));
}

TEST_CASE("compile negative cache: when full, the oldest failure makes room") {
  NegativeCache cache(60s, 3);
  const auto t0 = Clock::now();
  for (std::uint8_t i = 1; i <= 4; ++i) cache.remember(key(i), compile_error(std::to_string(i)), t0 + i * 1s);
  CHECK(cache.size() == 3);
  CHECK_FALSE(cache.find(key(1), t0 + 5s));
  CHECK(cache.find(key(4), t0 + 5s));
}

TEST_CASE(
    "compile negative cache: compile errors, refusals and worker crashes are remembered, spawn failures, "
    "cancellations, busy and successes are not") {
  CHECK(worth_remembering(compile_error("x")));
  CHECK(worth_remembering(CompileOutcome::make_refused(Refusal{RefusalReason::arch, "x"})));
  CHECK(worth_remembering(CompileOutcome::make_worker_failed(WorkerFailure::crashed, "x")));
  CHECK(worth_remembering(CompileOutcome::make_worker_failed(WorkerFailure::wall_time, "x")));
  CHECK_FALSE(worth_remembering(CompileOutcome::make_worker_failed(WorkerFailure::spawn, "x")));
  CHECK_FALSE(worth_remembering(CompileOutcome::make_worker_failed(WorkerFailure::cancelled, "x")));
  CHECK_FALSE(worth_remembering(CompileOutcome::make_busy("x")));
  CompileOutcome compiled;
  compiled.kind = OutcomeKind::compiled;
  CHECK_FALSE(worth_remembering(compiled));
}
