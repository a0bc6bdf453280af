// A CompileService over a scripted JobRunner, for the service's unit tests: the runner can hold
// every compile at a gate, records the order and concurrency of its runs, and answers each job by
// its tag (the last line of the PTX: "// tag NAME").
// Thread safety: the runner and the harness's records are safe from any thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <proto/digest.hpp>
#include <proto/jit_options.hpp>

#include <daemon/compile/compile_service.hpp>

namespace jitcache::testing {

namespace compile = daemon::compile;

inline std::string tagged_ptx(const std::string& tag) {
  return ".version 9.0\n.target sm_90\n.address_size 64\n// tag " + tag;
}

inline proto::Digest256 key_of(const std::string& tag) { return proto::sha256(proto::as_bytes(tag)); }

inline compile::CompileInput input_of(const std::string& ptx,
                                      const std::string& options = proto::default_option_text()) {
  return compile::CompileInput{"sm_90", 13000, options, proto::as_bytes(ptx)};
}

inline std::string image_text(const compile::CompileOutcome& outcome) {
  return std::string(outcome.image.begin(), outcome.image.end());
}

class ScriptedRunner final : public compile::JobRunner {
 public:
  std::atomic<bool> respond_with_compile_error{false};

  compile::CompileOutcome run(const compile::CompileJob& job, const std::atomic<bool>& stop) override {
    const std::string ptx(job.ptx.begin(), job.ptx.end());
    const std::string tag = ptx.substr(ptx.rfind("// tag ") + 7);
    std::unique_lock lock(m_mutex);
    m_order.push_back(tag);
    m_max_running = std::max(m_max_running, ++m_running);
    m_changed.notify_all();
    while (m_held && !stop) m_changed.wait_for(lock, std::chrono::milliseconds(5));
    --m_running;
    if (stop) return compile::CompileOutcome::make_worker_failed(compile::WorkerFailure::cancelled, "stopped");
    compile::CompileOutcome outcome;
    if (respond_with_compile_error) {
      outcome.kind = compile::OutcomeKind::compile_error;
      outcome.message = "ptxas fatal: " + tag;
    } else {
      outcome.kind = compile::OutcomeKind::compiled;
      const std::string image = "cubin of " + tag;
      outcome.image.assign(image.begin(), image.end());
      outcome.producer = "nvJitLink 13.0";
    }
    return outcome;
  }

  void hold() { set_held(true); }
  void open() { set_held(false); }
  bool wait_for_calls(std::size_t n) {
    std::unique_lock lock(m_mutex);
    return m_changed.wait_for(lock, std::chrono::seconds(10), [&] { return m_order.size() >= n; });
  }
  std::size_t calls() {
    std::lock_guard lock(m_mutex);
    return m_order.size();
  }
  int max_running() {
    std::lock_guard lock(m_mutex);
    return m_max_running;
  }
  std::vector<std::string> order() {
    std::lock_guard lock(m_mutex);
    return m_order;
  }

 private:
  void set_held(bool held) {
    std::lock_guard lock(m_mutex);
    m_held = held;
    m_changed.notify_all();
  }
  std::mutex m_mutex;
  std::condition_variable m_changed;
  bool m_held = false;
  int m_running = 0;
  int m_max_running = 0;
  std::vector<std::string> m_order;
};

class Harness {
 public:
  explicit Harness(compile::CompileServiceConfig config)
      : runner(std::make_shared<ScriptedRunner>()),
        service(config, compile::ToolkitVersion{13, 0}, runner,
                [this](const proto::Digest256&, const compile::CompileOutcomePtr&, const compile::CompileJob&) {
                  std::lock_guard lock(m_mutex);
                  ++m_sink_calls;
                  m_changed.notify_all();
                }) {}

  // Submits the job tagged `tag` under the key derived from the tag; outcomes are collected here.
  // `tenant`: who asks, for the per-tenant limits; `padding`: bytes of spaces that make the PTX larger.
  compile::CompileTicket submit(const std::string& tag, compile::Priority priority,
                                const std::string& options = proto::default_option_text(),
                                std::optional<std::uint32_t> tenant = std::nullopt, std::size_t padding = 0) {
    const std::string ptx = std::string(padding, ' ') + tagged_ptx(tag);
    auto ticket = service.submit(
        key_of(tag), input_of(ptx, options), priority,
        [this](compile::CompileOutcomePtr o) {
          std::lock_guard lock(m_mutex);
          m_outcomes.push_back(std::move(o));
          m_changed.notify_all();
        },
        tenant);
    return ticket ? *ticket : compile::CompileTicket{};
  }

  // Every outcome so far, once there are at least n (fails the test after 10 s).
  std::vector<compile::CompileOutcomePtr> wait_for_outcomes(std::size_t n) {
    std::unique_lock lock(m_mutex);
    const bool arrived = m_changed.wait_for(lock, std::chrono::seconds(10), [&] { return m_outcomes.size() >= n; });
    if (!arrived) throw std::runtime_error("timed out waiting for " + std::to_string(n) + " outcomes");
    return m_outcomes;
  }
  bool wait_for_sink(int n) {
    std::unique_lock lock(m_mutex);
    return m_changed.wait_for(lock, std::chrono::seconds(10), [&] { return m_sink_calls >= n; });
  }
  std::size_t outcome_count() {
    std::lock_guard lock(m_mutex);
    return m_outcomes.size();
  }
  int sink_calls() {
    std::lock_guard lock(m_mutex);
    return m_sink_calls;
  }

  std::shared_ptr<ScriptedRunner> runner;

 private:
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::vector<compile::CompileOutcomePtr> m_outcomes;
  int m_sink_calls = 0;

 public:
  compile::CompileService service;  // last: stopped and joined before the records above die
};

}  // namespace jitcache::testing
