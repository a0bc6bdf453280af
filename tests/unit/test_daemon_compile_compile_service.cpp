// CompileService (daemon/compile/compile_service.hpp) over a scripted runner: single flight, waiters
// leaving, the store sink, the governor (concurrency, queue bound, priorities), the negative cache,
// refusals, stop, and async_compile from a coroutine. The real worker is exercised in
// tests/integration/test_daemon_compile_worker.cpp and tests/fault/test_daemon_compile_runner_faults.cpp.
#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <proto/jit_options.hpp>

#include <daemon/compile/async_compile.hpp>
#include <daemon/compile/compile_service.hpp>

#include <tests/support/compile_service_harness.hpp>

using namespace jitcache::daemon::compile;
using namespace jitcache::testing;
using namespace std::chrono_literals;

TEST_CASE("compile service: 32 concurrent submissions of one key run one compile and all get its image") {
  Harness h({.max_concurrent = 4});
  h.runner->hold();
  std::vector<std::thread> threads;
  for (int i = 0; i < 32; ++i) threads.emplace_back([&] { h.submit("a", Priority::interactive); });
  for (auto& t : threads) t.join();
  CHECK(h.service.counters().single_flight_joins == 31);
  h.runner->open();
  const auto outcomes = h.wait_for_outcomes(32);
  CHECK(h.runner->calls() == 1);
  CHECK(h.sink_calls() == 1);
  for (const auto& outcome : outcomes) {
    CHECK(outcome == outcomes.front());  // one shared outcome
    CHECK(outcome->kind == OutcomeKind::compiled);
    CHECK(image_text(*outcome) == "cubin of a");
  }
  CHECK(h.service.counters().compiles == 1);
}

TEST_CASE("compile service: a waiter that leaves cancels nothing for the others") {
  Harness h({.max_concurrent = 1});
  h.runner->hold();
  const CompileTicket first = h.submit("a", Priority::interactive);
  h.submit("a", Priority::interactive);
  CHECK(h.service.leave(first));
  h.runner->open();
  const auto outcomes = h.wait_for_outcomes(1);
  CHECK(outcomes.front()->kind == OutcomeKind::compiled);
  CHECK(h.outcome_count() == 1);  // the leaver's handler would have run first
  CHECK_FALSE(h.service.leave(first));
}

TEST_CASE("compile service: when the last waiter leaves, the compile still finishes and is stored once") {
  Harness h({.max_concurrent = 1});
  h.runner->hold();
  const CompileTicket ticket = h.submit("a", Priority::interactive);
  REQUIRE(h.runner->wait_for_calls(1));
  CHECK(h.service.leave(ticket));
  h.runner->open();
  REQUIRE(h.wait_for_sink(1));
  std::this_thread::sleep_for(50ms);
  CHECK(h.sink_calls() == 1);
  CHECK(h.outcome_count() == 0);
  CHECK(h.runner->calls() == 1);
}

TEST_CASE("compile service: at most max_concurrent compiles run at once") {
  Harness h({.max_concurrent = 2});
  h.runner->hold();
  for (const char* key : {"a", "b", "c", "d", "e", "f"}) h.submit(key, Priority::interactive);
  REQUIRE(h.runner->wait_for_calls(2));
  std::this_thread::sleep_for(50ms);
  CHECK(h.runner->calls() == 2);
  CHECK(h.service.counters().queue_length == 4);
  CHECK(h.service.counters().running == 2);
  h.runner->open();
  h.wait_for_outcomes(6);
  CHECK(h.runner->max_running() == 2);
  CHECK(h.service.counters().queue_length == 0);
}

TEST_CASE("compile service: a tenant at its share of slots or PTX bytes is busy, another tenant and a join get in") {
  Harness h({.max_concurrent = 1, .max_queued = 100, .max_queued_per_tenant = 2, .max_bytes_per_tenant = 10'000});
  h.runner->hold();
  const auto& default_options = jitcache::proto::default_option_text();
  h.submit("a1", Priority::interactive, default_options, 1);
  REQUIRE(h.runner->wait_for_calls(1));
  h.submit("a2", Priority::interactive, default_options, 1);
  h.submit("a3", Priority::interactive, default_options, 1);  // tenant 1's third: over its 2 slots
  auto outcomes = h.wait_for_outcomes(1);
  CHECK(outcomes.front()->kind == OutcomeKind::busy);
  CHECK_THAT(outcomes.front()->message,
             Catch::Contains("uid 1 has 2 compiles") && Catch::Contains("compile_queue_per_uid"));
  h.submit("a2", Priority::interactive, default_options, 1);         // a join takes no slot
  h.submit("b1", Priority::interactive, default_options, 2);         // another tenant has its own share
  h.submit("b2", Priority::interactive, default_options, 2, 9'960);  // with b1: over its PTX bytes
  outcomes = h.wait_for_outcomes(2);
  CHECK(outcomes.back()->kind == OutcomeKind::busy);
  CHECK_THAT(outcomes.back()->message, Catch::Contains("compile_bytes_per_uid"));
  CHECK(h.service.counters().busy_rejections == 2);
  CHECK(h.service.counters().busy_per_tenant == 2);
  CHECK(h.service.counters().single_flight_joins == 1);
  h.submit("untracked", Priority::interactive);  // no tenant: not limited per tenant
  h.runner->open();
  outcomes = h.wait_for_outcomes(7);
  CHECK(h.runner->calls() == 4);  // a1, a2, b1, untracked
  // Finished compiles give their slots back.
  h.submit("a4", Priority::interactive, default_options, 1);
  h.submit("a5", Priority::interactive, default_options, 1);
  outcomes = h.wait_for_outcomes(9);
  CHECK(outcomes[7]->kind == OutcomeKind::compiled);
  CHECK(outcomes[8]->kind == OutcomeKind::compiled);
  CHECK(h.service.counters().busy_per_tenant == 2);
}

TEST_CASE("compile service: tenants take turns within a priority, whoever queued more first") {
  Harness h({.max_concurrent = 1, .max_queued = 100});
  h.runner->hold();
  const auto& options = jitcache::proto::default_option_text();
  for (const char* tag : {"b1", "b2", "b3", "b4"}) h.submit(tag, Priority::interactive, options, 2);
  REQUIRE(h.runner->wait_for_calls(1));
  h.submit("a1", Priority::interactive, options, 1);
  h.submit("a2", Priority::interactive, options, 1);
  h.runner->open();
  h.wait_for_outcomes(6);
  CHECK(h.runner->order() == std::vector<std::string>{"b1", "a1", "b2", "a2", "b3", "b4"});
}

TEST_CASE("compile service: one tenant runs at most max_concurrent - 1 compiles, so another's starts at once") {
  Harness h({.max_concurrent = 2, .max_queued = 100});
  h.runner->hold();
  const auto& options = jitcache::proto::default_option_text();
  for (const char* tag : {"b1", "b2", "b3"}) h.submit(tag, Priority::interactive, options, 2);
  REQUIRE(h.runner->wait_for_calls(1));
  std::this_thread::sleep_for(50ms);
  CHECK(h.runner->calls() == 1);               // the other slot waits for another tenant
  h.submit("a1", Priority::warm, options, 1);  // even a warm compile of another tenant
  REQUIRE(h.runner->wait_for_calls(2));
  CHECK(h.runner->order() == std::vector<std::string>{"b1", "a1"});
  h.runner->open();
  h.wait_for_outcomes(4);
  CHECK(h.runner->max_running() == 2);
}

TEST_CASE("compile service: a full queue answers busy at once, but a join still gets in") {
  Harness h({.max_concurrent = 1, .max_queued = 2});
  h.runner->hold();
  h.submit("running", Priority::interactive);
  REQUIRE(h.runner->wait_for_calls(1));
  h.submit("q1", Priority::interactive);
  h.submit("q2", Priority::interactive);
  h.submit("over", Priority::interactive);
  auto busy = h.wait_for_outcomes(1);
  CHECK(busy.front()->kind == OutcomeKind::busy);
  CHECK_THAT(busy.front()->message, Catch::Contains("queue is full"));
  CHECK(h.service.counters().busy_rejections == 1);
  h.submit("q1", Priority::warm);  // joins the queued compile: no slot needed
  CHECK(h.service.counters().busy_rejections == 1);
  h.runner->open();
  h.wait_for_outcomes(5);
  CHECK(h.runner->calls() == 3);
}

TEST_CASE("compile service: interactive compiles run before warm ones queued earlier") {
  Harness h({.max_concurrent = 1});
  h.runner->hold();
  h.submit("running", Priority::warm);
  REQUIRE(h.runner->wait_for_calls(1));
  h.submit("warm1", Priority::warm);
  h.submit("warm2", Priority::warm);
  h.submit("interactive", Priority::interactive);
  h.runner->open();
  h.wait_for_outcomes(4);
  CHECK(h.runner->order() == std::vector<std::string>{"running", "interactive", "warm1", "warm2"});
}

TEST_CASE("compile service: an interactive waiter joining a queued warm compile moves it ahead") {
  Harness h({.max_concurrent = 1});
  h.runner->hold();
  h.submit("running", Priority::warm);
  REQUIRE(h.runner->wait_for_calls(1));
  h.submit("warm1", Priority::warm);
  h.submit("warm2", Priority::warm);
  h.submit("warm2", Priority::interactive);
  h.runner->open();
  h.wait_for_outcomes(4);
  CHECK(h.runner->order() == std::vector<std::string>{"running", "warm2", "warm1"});
}

TEST_CASE("compile service: when the queue is full, an interactive request takes the newest warm slot") {
  Harness h({.max_concurrent = 1, .max_queued = 2});
  h.runner->hold();
  h.submit("running", Priority::warm);
  REQUIRE(h.runner->wait_for_calls(1));
  h.submit("warm1", Priority::warm);
  h.submit("warm2", Priority::warm);
  h.submit("interactive", Priority::interactive);
  const auto displaced = h.wait_for_outcomes(1);
  CHECK(displaced.front()->kind == OutcomeKind::busy);
  CHECK(h.service.counters().busy_rejections == 1);
  h.runner->open();
  h.wait_for_outcomes(4);
  CHECK(h.runner->order() == std::vector<std::string>{"running", "interactive", "warm1"});
}

TEST_CASE("compile service: a failed compile is served from the negative cache for its TTL, then retried") {
  Harness h({.max_concurrent = 1, .negative_ttl = 300ms});
  h.runner->respond_with_compile_error = true;
  h.submit("bad", Priority::interactive);
  auto first = h.wait_for_outcomes(1);
  CHECK(first.back()->kind == OutcomeKind::compile_error);
  CHECK(first.back()->message == "ptxas fatal: bad");
  CHECK_FALSE(first.back()->from_negative_cache);

  h.submit("bad", Priority::interactive);
  auto second = h.wait_for_outcomes(2);
  CHECK(second.back()->kind == OutcomeKind::compile_error);
  CHECK(second.back()->message == "ptxas fatal: bad");
  CHECK(second.back()->from_negative_cache);
  CHECK(h.runner->calls() == 1);
  CHECK(h.service.counters().negative_hits == 1);
  CHECK(h.service.counters().compile_failures == 1);

  std::this_thread::sleep_for(400ms);
  h.submit("bad", Priority::interactive);
  auto third = h.wait_for_outcomes(3);
  CHECK_FALSE(third.back()->from_negative_cache);
  CHECK(h.runner->calls() == 2);
  CHECK(h.sink_calls() == 0);  // failures are never stored
}

TEST_CASE("compile service: a refused request is answered at once without a compile") {
  Harness h({.max_concurrent = 1});
  h.submit("a", Priority::interactive, *jitcache::proto::canonicalize_option_text("tpb=128"));
  const auto outcomes = h.wait_for_outcomes(1);
  CHECK(outcomes.front()->kind == OutcomeKind::refused);
  CHECK(outcomes.front()->refusal == RefusalReason::option);
  CHECK(h.runner->calls() == 0);
  CHECK(h.service.counters().refused == 1);
}

TEST_CASE("compile service: a malformed request is an error and its handler never runs") {
  Harness h({.max_concurrent = 1});
  const std::string ptx = tagged_ptx("a");
  auto result = h.service.submit(key_of("a"), CompileInput{"sm_90", 13000, "opt=4", jitcache::proto::as_bytes(ptx)},
                                 Priority::interactive, [](CompileOutcomePtr) { FAIL("handler ran"); });
  REQUIRE_FALSE(result);
  CHECK(result.error().code == jitcache::common::ErrorCode::invalid_argument);
}

TEST_CASE("compile service: stop abandons running compiles, answers queued ones busy, and refuses new ones") {
  Harness h({.max_concurrent = 1});
  h.runner->hold();
  h.submit("running", Priority::interactive);
  REQUIRE(h.runner->wait_for_calls(1));
  h.submit("queued", Priority::interactive);
  h.service.stop();
  const auto outcomes = h.wait_for_outcomes(2);
  int busy = 0;
  int cancelled = 0;
  for (const auto& o : outcomes) {
    busy += o->kind == OutcomeKind::busy;
    cancelled += o->kind == OutcomeKind::worker_failed && o->failure == WorkerFailure::cancelled;
  }
  CHECK(busy == 1);
  CHECK(cancelled == 1);
  h.submit("later", Priority::interactive);
  CHECK(h.wait_for_outcomes(3).back()->kind == OutcomeKind::busy);
  CHECK(h.sink_calls() == 0);
}

TEST_CASE("compile service: async_compile completes a coroutine on its own executor") {
  Harness h({.max_concurrent = 1});
  boost::asio::io_context io;
  const std::string ptx = tagged_ptx("co");
  std::thread::id resumed_on;
  CompileOutcomePtr outcome;
  boost::asio::co_spawn(
      io,
      [&]() -> boost::asio::awaitable<void> {
        auto result = co_await async_compile(h.service, key_of("co"), input_of(ptx), Priority::interactive,
                                             boost::asio::use_awaitable);
        resumed_on = std::this_thread::get_id();
        if (result) outcome = *result;
      },
      boost::asio::detached);
  io.run();  // returns only after the completion ran: the pending compile keeps it busy
  REQUIRE(outcome);
  CHECK(outcome->kind == OutcomeKind::compiled);
  CHECK(image_text(*outcome) == "cubin of co");
  CHECK(resumed_on == std::this_thread::get_id());
}

TEST_CASE(
    "compile service: a link's inputs count together against its tenant's bytes, and a daemon without its "
    "nvJitLink's build refuses the link") {
  Harness h({.max_concurrent = 1, .max_bytes_per_tenant = 1'000});
  const std::string half(600, 'x');
  const std::vector<jitcache::proto::CompileLinkInput> inputs = {{jitcache::proto::LinkInputKind::ptx,
                                                                  jitcache::proto::as_bytes(half)},
                                                                 {jitcache::proto::LinkInputKind::library,
                                                                  jitcache::proto::as_bytes(half)}};
  CompileInput link;
  link.arch = "sm_90";
  link.driver_api = 13000;
  link.driver_build = "nvjitlink-13.0-1";
  link.options = jitcache::proto::nvjitlink_option_text({});
  link.link_inputs = inputs;
  CHECK(link.source_bytes() == 1'200);
  std::vector<CompileOutcomePtr> outcomes;
  auto record = [&outcomes](CompileOutcomePtr outcome) { outcomes.push_back(std::move(outcome)); };
  REQUIRE(h.service.submit(key_of("link"), link, Priority::interactive, record, 7));
  REQUIRE(outcomes.size() == 1);
  CHECK(outcomes[0]->kind == OutcomeKind::busy);
  CHECK_THAT(outcomes[0]->message, Catch::Contains("compile_bytes_per_uid"));
  link.link_inputs = std::span(inputs).first(1);
  REQUIRE(h.service.submit(key_of("link"), link, Priority::interactive, record, 7));
  REQUIRE(outcomes.size() == 2);
  CHECK(outcomes[1]->kind == OutcomeKind::refused);
  CHECK(outcomes[1]->refusal == RefusalReason::linker);
  CHECK_FALSE(h.service.compiles_links());
  CHECK(h.runner->calls() == 0);
}

namespace {

// A gate that lets every compile through and keeps what it was told of the last one.
class RecordingGate final : public CompileGate {
 public:
  std::optional<CompileOutcome> before_compile(const GateSubject& subject, const std::atomic<bool>&) override {
    std::lock_guard lock(m_mutex);
    key_id = subject.key_id;
    arch = subject.arch;
    driver_api = subject.driver_api;
    driver_build = subject.driver_build;
    options = subject.options;
    ptx.assign(subject.ptx.begin(), subject.ptx.end());
    return std::nullopt;
  }
  void after_compile(const jitcache::proto::Digest256&, const CompileOutcome&) override {}

  std::mutex m_mutex;
  jitcache::proto::Digest256 key_id{};
  std::string arch, driver_build, options, ptx;
  std::uint32_t driver_api = 0;
};

}  // namespace

TEST_CASE("compile service: the gate is told the key's fields and the exact PTX it would compile") {
  // A fleet consumer hands these to a builder (daemon/remote/ask_desk.hpp), which files the image
  // under the key they make: a field left out or altered would make its ask name another key.
  RecordingGate gate;
  Harness h({.max_concurrent = 1});
  h.service.set_gate(&gate);
  h.submit("gated", Priority::interactive);
  h.wait_for_outcomes(1);
  std::lock_guard lock(gate.m_mutex);
  CHECK(gate.key_id == key_of("gated"));
  CHECK(gate.arch == "sm_90");
  CHECK(gate.driver_api == 13000);
  CHECK(gate.options == jitcache::proto::default_option_text());
  CHECK(gate.ptx == tagged_ptx("gated"));
}
