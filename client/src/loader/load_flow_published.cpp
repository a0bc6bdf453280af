// LoadFlow's published hit: the daemon's read-only copy of a shared entry, read from the directory
// beside its socket instead of asked for over it (docs/architecture.md "Published images").
//
// Rationale: a small module's hit was mostly the LOOKUP round trip, and most of that the wake-up
// of the daemon's idle CPU on a virtual machine (docs/benchmarks.md "Why the small target was
// still missed over the socket"). Reading a file costs no wake-up, and the load opens no connection: the daemon learns
// of the hit from a HIT_NOTE sent later (pending_hit_notes.hpp).
#include <client/src/loader/load_flow.hpp>

#include <client/src/loader/cached_image_check.hpp>

namespace jitcache::client::loader {

std::optional<CUresult> LoadFlow::load_published(ImageTarget& target, const void* image, const CallerOptions& options,
                                                 const key::PtxSource& source, LoadKey& key) {
  const proto::FastKey fast_key = key.built.fast_key();
  std::optional<transport::FetchedImage> fetched;
  {
    auto timer = m_record.step(&jitcache_load_info::ns_lookup);
    auto read = m_cache.read_published(fast_key);
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
  const proto::KeyFields& fields = key.complete();
  {
    auto timer = m_record.step(&jitcache_load_info::ns_lookup);
    if (auto checked = check_cached_image(*fetched, fields); !checked) {
      ++m_counters.published_rejects;
      return std::nullopt;
    }
  }
  auto result = load_hit(target, options, *fetched, fields, JITCACHE_OUTCOME_HIT, true);
  if (result) {
    if (*result == CUDA_SUCCESS) {
      ++m_counters.published_hits;
      // The daemon learns of the hit later, off this load's path (pending_hit_notes.hpp).
      m_cache.note_published_hit(fast_key);
    }
    return result;
  }
  // The driver refused the image (reported, when the daemon could be reached, so the daemon
  // quarantines the entry and removes its file): rebuilt as after a failed socket hit, and stored
  // when there is a daemon to store it.
  const bool store = m_cache.connect().ok();
  return compile_locally(target, image, options, source, key, store, JITCACHE_OUTCOME_REBUILT_AFTER_FAILED_LOAD);
}

}  // namespace jitcache::client::loader
