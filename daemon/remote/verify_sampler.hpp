// VerifySampler: the sampled re-verification of remote hits (remote_verify_sample,
// docs/security.md "A writable remote"). A signature says which builder vouched for an entry, not
// that the builder is honest or healthy; nvJitLink's output is a function of its inputs, toolkit
// and options, so a host can compile a fraction of what the fleet serves it and compare byte for
// byte. The source comes from the remote's "src" space, checked against the key's content digest;
// a mismatch quarantines the entry here (every client of this host stops being served it), is
// counted (verify_mismatches) and logged with the signer, so an operator can retire that key.
//
// Only comparable entries are compiled: a record whose producer is this host's nvJitLink, of a
// module (a link's inputs are not kept), with a source in the remote. The rest are counted as
// verify_skipped. One compile at a time on its own thread, outside the compile service's queue, at
// most k_max_pending waiting (more are skipped): the sample never competes with a client for long.
//
// Thread safety: offer() from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include <daemon/compile/job_runner.hpp>
#include <daemon/compile/toolkit_support.hpp>
#include <daemon/remote/remote_tier.hpp>
#include <daemon/store/tenancy.hpp>

namespace jitcache::daemon::remote {

class VerifySampler {
 public:
  static constexpr std::size_t k_max_pending = 8;

  VerifySampler(double fraction, RemoteTier& tier, store::Tenancy& tenancy, std::shared_ptr<compile::JobRunner> runner,
                compile::ToolkitVersion toolkit);
  ~VerifySampler();  // abandons a running compile and what waits
  VerifySampler(const VerifySampler&) = delete;
  VerifySampler& operator=(const VerifySampler&) = delete;

  // A remote hit: sampled with the configured probability.
  void offer(const Fetched& fetched);

 private:
  void loop();
  void verify(const Fetched& sample);

  const double m_fraction;
  RemoteTier& m_tier;
  store::Tenancy& m_tenancy;
  std::shared_ptr<compile::JobRunner> m_runner;
  const compile::ToolkitVersion m_toolkit;
  std::mutex m_mutex;
  std::condition_variable m_ready;
  std::deque<Fetched> m_pending;
  std::mt19937_64 m_random;
  std::atomic<bool> m_stop{false};
  std::thread m_thread;
};

}  // namespace jitcache::daemon::remote
