// LoadFlow's published hit: the daemon's read-only copy of a shared entry, read from the directory
// beside its socket instead of asked for over it (docs/architecture.md "Published images").
//
// Rationale: a small module's hit was mostly the LOOKUP round trip, and most of that the wake-up
// of the daemon's idle CPU on a virtual machine (docs/benchmarks.md "Why the small target was
// still missed over the socket"). Reading a file costs no wake-up, and the load opens no connection: the daemon learns of
// the hit from a HIT_NOTE sent later (pending_hit_notes.hpp).
#include <client/src/loader/load_flow.hpp>

#include <client/src/loader/cached_image_check.hpp>
#include <client/src/loader/pending_hit_notes.hpp>
#include <client/src/transport/published_reader.hpp>

namespace jitcache::client::loader {

std::optional<CUresult> LoadFlow::load_published(CUmodule* module, const void* image, const CallerOptions& options,
                                                 const PtxSource& source, const proto::KeyFields& key,
                                                 const proto::FastKey& fast_key,
                                                 const std::function<void()>& record_key,
                                                 const LeaseSource& lease) {
  std::optional<transport::FetchedImage> fetched;
  {
    auto timer = m_record.step(&jitcache_load_info::ns_lookup);
    auto read = transport::read_published(m_daemon->settings().socket_path, m_daemon->settings().daemon_trust, fast_key,
                                          proto::fast_key_id(fast_key));
    if (!read) {
      ++m_counters.published_rejects;
      return std::nullopt;
    }
    if (!read->has_value()) return std::nullopt;
    fetched = std::move(**read);
  }
  // The same bar as a socket hit: the entry's content digest must be the one computed here, from
  // the caller's bytes, before the driver sees a byte of the image
  // (docs/client-guide.md §4 step 3, "Published copies").
  record_key();
  {
    auto timer = m_record.step(&jitcache_load_info::ns_lookup);
    if (auto checked = check_cached_image(*fetched, key); !checked) {
      ++m_counters.published_rejects;
      return std::nullopt;
    }
  }
  auto result = load_hit(module, options, lease, *fetched, key, JITCACHE_OUTCOME_HIT, true);
  if (result) {
    if (*result == CUDA_SUCCESS) {
      ++m_counters.published_hits;
      // The daemon learns of the hit later, off this load's path (pending_hit_notes.hpp).
      PendingHitNotes::instance().add(m_daemon->connect_options(), fast_key);
    }
    return result;
  }
  // The driver refused the image (reported, when the daemon could be reached, so the daemon
  // quarantines the entry and removes its file): rebuilt as after a failed socket hit, and stored
  // when there is a daemon to store it.
  const StoreHint hint{fast_key.content_fast};
  return compile_locally(module, image, options, source, key, hint, lease(),
                         JITCACHE_OUTCOME_REBUILT_AFTER_FAILED_LOAD);
}

}  // namespace jitcache::client::loader
