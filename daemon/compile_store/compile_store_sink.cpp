#include <daemon/compile_store/compile_store_sink.hpp>

#include <optional>

#include <spdlog/spdlog.h>

#include <daemon/publish/publisher.hpp>

namespace jitcache::daemon::compile_store {

using stats::Counters;

void CompileStoreSink::expect(const proto::Digest256& key_id, const proto::KeyFields& key,
                              const proto::Checksum128& content_fast) {
  std::lock_guard lock(m_mutex);
  Expected& expected = m_expected[key_id];
  if (expected.requests++ == 0) {
    expected.key = key;
    expected.content_fast = content_fast;
  }
}

void CompileStoreSink::release(const proto::Digest256& key_id) {
  std::lock_guard lock(m_mutex);
  const auto it = m_expected.find(key_id);
  if (it != m_expected.end() && --it->second.requests == 0) m_expected.erase(it);
}

void CompileStoreSink::operator()(const proto::Digest256& key_id, const compile::CompileOutcomePtr& outcome,
                                  const compile::CompileJob& job) {
  std::optional<Expected> expected;
  {
    std::lock_guard lock(m_mutex);
    if (const auto it = m_expected.find(key_id); it != m_expected.end()) expected = it->second;
  }
  if (!expected) {
    // Cannot happen while every submit is preceded by expect(); an image without its key is dropped
    // rather than filed under a guess.
    spdlog::error("compiled key_id={} without a registered key: not stored", proto::to_hex(key_id));
    return;
  }
  store::PutInput input;
  input.key = expected->key;
  input.namespace_id = store::k_shared_namespace;
  input.producer = outcome->producer;
  input.compile_time_us = outcome->compile_time_us;
  input.image = proto::Bytes(outcome->image);
  input.content_fast = expected->content_fast;
  input.source = proto::Bytes(job.ptx);
  // Kept beside the source (store/sources.hpp): how this very image was compiled.
  for (const std::string& option : job.nvjitlink_options) {
    if (!input.worker_options.empty()) input.worker_options += '\n';
    input.worker_options += option;
  }
  auto stored = m_store.put(input);
  if (!stored) {
    spdlog::error("storing the compiled image of key_id={}: {}", proto::to_hex(key_id), stored.error().message);
    return;
  }
  Counters::add(m_counters.compile_stored);
  if (m_publisher != nullptr) {
    m_publisher->stored(stored->row_id, input.namespace_id, proto::fast_key_of(input.key, expected->content_fast),
                        input.image);
  }
  spdlog::info("COMPILE stored key_id={} arch={} driver={}/{} bytes={} compile_time_us={} ({})", proto::to_hex(key_id),
               input.key.arch, input.key.driver_api, input.key.driver_build, input.image.size(), input.compile_time_us,
               input.producer);
}

}  // namespace jitcache::daemon::compile_store
