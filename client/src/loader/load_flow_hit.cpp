// LoadFlow's hit: check the image, load it, and on an image error report it so the daemon
// quarantines the entry (docs/client-guide.md §4 steps 3-4). load_flow.hpp has the whole flow.
#include <client/src/loader/load_flow.hpp>

#include <client/src/driver/cu_result_text.hpp>
#include <client/src/driver/load_error_class.hpp>
#include <client/src/loader/cached_image_check.hpp>
#include <client/src/loader/load_wording.hpp>

namespace jitcache::client::loader {

std::optional<CUresult> LoadFlow::load_hit(ImageTarget& target, const CallerOptions& options,
                                           const transport::FetchedImage& fetched, const proto::KeyFields& key,
                                           jitcache_load_outcome success, bool published) {
  {
    auto timer = m_record.step(&jitcache_load_info::ns_lookup);
    if (auto checked = check_cached_image(fetched, key); !checked) {
      ++m_counters.corrupt_replies;
      m_record.reason("the cached image failed the client's check (" + checked.error().message + "); rebuilt");
      return std::nullopt;
    }
  }
  CUresult result = CUDA_SUCCESS;
  {
    auto timer = m_record.step(&jitcache_load_info::ns_load);
    result = target.load_cubin(fetched.bytes().data(), fetched.bytes().size());
  }
  if (result == CUDA_SUCCESS) {
    m_record.outcome(success);
    const std::string what = "loaded " + key.arch + " image " + proto::to_hex(fetched.info.key_id).substr(0, 16) +
                             (success == JITCACHE_OUTCOME_COMPILED_BY_DAEMON ? " compiled by jitcached ("
                              : published                                    ? " from the cache's published copy ("
                                                                             : " from the cache (") +
                             fetched.info.producer + ")";
    m_record.reason(what);
    options.fill_logs("jitcache: " + what, "", m_record.elapsed_ms());
    return result;
  }
  const driver::LoadErrorClass error_class = driver::classify_load_error(result);
  if (error_class != driver::LoadErrorClass::bad_image) {
    m_record.outcome(success);
    m_record.stage(JITCACHE_STAGE_LOAD, result);
    m_record.reason("the cached image failed to load with " + driver::describe_result(result) +
                    ", which is not an image error: returned unchanged");
    options.fill_logs("", "jitcache: loading the cached image returned " + driver::describe_result(result),
                      m_record.elapsed_ms());
    return result;
  }

  // The entry is bad for this driver or device: tell the daemon so nobody else loads it, then rebuild.
  m_record.stage(stage_for(result), result);
  m_record.reason("the cached image failed to load with " + driver::describe_result(result) + "; reported and rebuilt");
  {
    auto timer = m_record.step(&jitcache_load_info::ns_report);
    proto::ReportFailureRequest report;
    report.key = key;
    report.cu_result = static_cast<std::uint32_t>(result);
    report.stage = static_cast<proto::FailureStage>(stage_for(result));
    report.detail = std::string(target.call_name()) + " returned " + driver::describe_result(result);
    // A published copy was loaded without a connection: the report needs one now.
    if (auto connected = m_cache.connect(); !connected) {
      m_record.append_reason(" (jitcached cannot be reached: not reported)");
    } else if (auto capabilities = m_cache.capabilities();
               capabilities && (*capabilities & proto::k_capability_report_failure)) {
      if (m_cache.report_failure(report)) ++m_counters.failure_reports;
    } else {
      m_record.append_reason(" (this daemon takes no failure reports; the rebuilt image replaces the entry)");
    }
  }
  return std::nullopt;
}

}  // namespace jitcache::client::loader
