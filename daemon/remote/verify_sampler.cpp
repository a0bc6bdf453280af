#include <daemon/remote/verify_sampler.hpp>

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <daemon/compile/prepare_job.hpp>
#include <proto/key.hpp>

namespace jitcache::daemon::remote {

VerifySampler::VerifySampler(double fraction, RemoteTier& tier, store::Tenancy& tenancy,
                             std::shared_ptr<compile::JobRunner> runner, compile::ToolkitVersion toolkit)
    : m_fraction(fraction),
      m_tier(tier),
      m_tenancy(tenancy),
      m_runner(std::move(runner)),
      m_toolkit(toolkit),
      m_random(std::random_device{}()) {
  m_thread = std::thread([this] { loop(); });
}

VerifySampler::~VerifySampler() {
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_ready.notify_all();
  m_thread.join();
}

void VerifySampler::offer(const Fetched& fetched) {
  if (m_fraction <= 0) return;
  RemoteCounters& counters = m_tier.remote(fetched.remote).counters;
  {
    std::lock_guard lock(m_mutex);
    if (m_fraction < 1 && std::uniform_real_distribution<double>(0, 1)(m_random) >= m_fraction) return;
    if (m_pending.size() >= k_max_pending) {
      RemoteCounters::add(counters.verify_skipped);
      return;
    }
    m_pending.push_back(fetched);
  }
  m_ready.notify_one();
}

void VerifySampler::loop() {
  for (;;) {
    Fetched sample;
    {
      std::unique_lock lock(m_mutex);
      m_ready.wait(lock, [&] { return m_stop || !m_pending.empty(); });
      if (m_stop) return;
      sample = std::move(m_pending.front());
      m_pending.pop_front();
    }
    verify(sample);
  }
}

void VerifySampler::verify(const Fetched& sample) {
  RemoteCounters& counters = m_tier.remote(sample.remote).counters;
  const IndexRecord& record = sample.record;
  const std::string key_hex = proto::to_hex(proto::key_id(record.key));
  const std::string signer = proto::signer_hex(record.signer);
  auto skip = [&](std::string_view why) {
    RemoteCounters::add(counters.verify_skipped);
    spdlog::debug("remote verification of key_id={} skipped: {}", key_hex, why);
  };
  if (record.producer != compile::producer_name(m_toolkit)) return skip("built by " + record.producer);
  auto source = m_tier.fetch_source(record.key.content, sample.remote);
  if (!source) return skip("no source in the remote");
  compile::CompileInput input;
  input.arch = record.key.arch;
  input.driver_api = record.key.driver_api;
  input.driver_build = record.key.driver_build;
  input.options = record.key.options;
  input.ptx = *source;
  auto prepared = compile::prepare_job(input, m_toolkit);
  if (!prepared || !std::holds_alternative<compile::CompileJob>(*prepared)) return skip("not compilable here");
  const compile::CompileOutcome outcome = m_runner->run(std::get<compile::CompileJob>(*prepared), m_stop);
  if (outcome.kind != compile::OutcomeKind::compiled && outcome.kind != compile::OutcomeKind::compile_error) {
    // A worker that crashed or timed out here says nothing about the entry.
    if (outcome.failure != compile::WorkerFailure::cancelled) skip(compile::outcome_kind_name(outcome.kind));
    return;
  }
  if (outcome.kind == compile::OutcomeKind::compile_error) {
    // The builder compiled it and our nvJitLink refuses the same source: as much a mismatch as
    // different bytes.
    spdlog::error("remote verification of key_id={} (signer {}, host {}): it does not compile here ({}): {}", key_hex,
                  signer, record.host, compile::outcome_kind_name(outcome.kind), outcome.message);
  } else if (outcome.image.size() == sample.image.size() &&
             std::equal(outcome.image.begin(), outcome.image.end(), sample.image.begin())) {
    RemoteCounters::add(counters.verify_samples);
    return;
  } else {
    spdlog::error(
        "remote verification of key_id={}: the image signed by {} (host {}) differs from this host's compile ({} vs {} "
        "bytes): quarantined here; if it repeats, remove that key from remote_trusted_keys",
        key_hex, signer, record.host, sample.image.size(), outcome.image.size());
  }
  RemoteCounters::add(counters.verify_samples);
  RemoteCounters::add(counters.verify_mismatches);
  store::FailureReport report;
  report.stage = proto::FailureStage::jit;
  report.detail = "remote verification: the image signed by " + signer + " differs from a local compile";
  report.reporter_uid = ::geteuid();
  auto quarantined =
      m_tenancy.report_failure(proto::key_id(record.key), store::Visibility{store::k_shared_namespace, true}, report);
  if (!quarantined) spdlog::error("quarantining key_id={}: {}", key_hex, quarantined.error().message);
}

}  // namespace jitcache::daemon::remote
