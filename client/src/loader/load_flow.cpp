// LoadFlow's first stages: the arguments, the source (key/image_source.hpp), the key
// (key/key_builder.hpp), then the cache through the port. load_flow.hpp has the whole flow.
#include <client/src/loader/load_flow.hpp>

#include <client/src/driver/cu_result_text.hpp>
#include <client/src/driver/driver_identity.hpp>
#include <client/src/loader/load_wording.hpp>
#include <client/src/loader/process_warning.hpp>

namespace jitcache::client::loader {

namespace {

// PTX at least this large compiles to images the daemon sends as a descriptor (its threshold is
// 64 KiB of image; PTX is typically 2-4x its cubin).
constexpr std::size_t k_descriptor_worthy_source = 256 << 10;

// Why a source stage that found no PTX hands the image to the driver, as a load record says it.
std::string no_source_reason(const key::ImageSource& source) {
  switch (*source.none) {
    case key::NoSource::unrecognised:
      return "image not recognised (" + source.detail + "): handed to the driver as given";
    case key::NoSource::cubin: return "a cubin: nothing to compile";
    case key::NoSource::fatbin_unreadable:
      return "fat binary not understood (" + source.detail + "): handed to the driver as given";
    case key::NoSource::no_device: return "no current device to select an image for: handed to the driver as given";
    case key::NoSource::no_image_for_device: return source.detail;
    case key::NoSource::cubin_for_device: return "the fat binary holds a cubin for this device (" + source.entry + ")";
    case key::NoSource::embedded_options: return "uncacheable: " + source.detail;
  }
  return source.detail;
}

}  // namespace

const proto::KeyFields& LoadFlow::LoadKey::complete() {
  if (!recorded) {
    recorded = true;
    auto timer = record.step(&jitcache_load_info::ns_key);
    const proto::KeyFields& fields = built.complete();
    record.key(proto::to_hex(proto::key_id(fields)), fields.arch);
  }
  return built.complete();
}

CUresult LoadFlow::driver_load(ImageTarget& target, const void* image, const CallerOptions& options,
                               jitcache_load_outcome outcome, std::string_view why) {
  m_record.outcome(outcome);
  m_record.reason(why);
  OptionArrays given = options.as_given();
  CUresult result = CUDA_SUCCESS;
  {
    auto timer = m_record.step(&jitcache_load_info::ns_load);
    result = target.load_as_given(image, given.count(), given.options_data(), given.values_data());
  }
  options.publish(given);
  if (result != CUDA_SUCCESS) {
    m_record.stage(stage_for(result), result);
    m_record.append_reason("; the driver's load returned " + driver::describe_result(result));
    if (auto log = excerpt(options.error_log()); !log.empty()) m_record.append_reason(": " + log);
  }
  return result;
}

CUresult LoadFlow::daemon_failed(ImageTarget& target, const void* image, const CallerOptions& options,
                                 const common::Error& error) {
  ++m_counters.daemon_unavailable;
  const std::string why = "jitcached at " + m_settings.socket_path + " cannot be used: " + error.message;
  warn_once(why, m_settings.quiet);
  return driver_load(target, image, options, JITCACHE_OUTCOME_UNCACHED_FALLBACK, why);
}

CUresult LoadFlow::load(CUmodule* module, const void* image, const CallerOptions& options) {
  ModuleTarget target(m_api, module);
  return load(target, image, options);
}

CUresult LoadFlow::load(ImageTarget& target, const void* image, const CallerOptions& options) {
  if (!target.has_output() || image == nullptr || !options.well_formed()) {
    // Handed over exactly as received (null arrays included), so the answer is the driver's own.
    m_record.outcome(JITCACHE_OUTCOME_PASS_THROUGH);
    m_record.reason("invalid arguments: the driver's answer is returned");
    const CUresult result = target.load_as_given(image, options.count(), options.raw_options(), options.raw_values());
    if (result != CUDA_SUCCESS) m_record.stage(stage_for(result), result);
    return result;
  }
  if (m_settings.disabled) {
    return driver_load(target, image, options, JITCACHE_OUTCOME_UNCACHED_FALLBACK,
                       "caching is disabled (" + m_settings.disabled_by + ")");
  }
  return load_image(target, image, options);
}

CUresult LoadFlow::load_image(ImageTarget& target, const void* image, const CallerOptions& options) {
  auto current_device = [&]() -> std::optional<driver::ComputeCapability> {
    auto cc = target.device();
    if (!cc) return std::nullopt;
    return *cc;
  };
  key::ImageSource source;
  {
    auto timer = m_record.step(&jitcache_load_info::ns_classify);
    const auto isa = driver::max_ptx_isa(m_api.api_version);
    source = key::find_source(image, current_device, {isa.major, isa.minor});
  }
  if (source.none) {
    if (*source.none == key::NoSource::no_image_for_device) {
      m_record.stage(JITCACHE_STAGE_IMAGE, CUDA_ERROR_NO_BINARY_FOR_GPU);
    }
    const auto outcome = *source.none == key::NoSource::embedded_options ? JITCACHE_OUTCOME_UNCACHED_FALLBACK
                                                                         : JITCACHE_OUTCOME_PASS_THROUGH;
    return driver_load(target, image, options, outcome, no_source_reason(source));
  }
  if (!source.device) source.device = current_device();
  if (!source.device) {
    return driver_load(target, image, options, JITCACHE_OUTCOME_PASS_THROUGH,
                       "no device to key for (" + std::string(target.call_name()) + "): handed to the driver as given");
  }
  return load_ptx(target, image, options, source.ptx, *source.device);
}

CUresult LoadFlow::load_ptx(ImageTarget& target, const void* image, const CallerOptions& options,
                            const key::PtxSource& source, const driver::ComputeCapability& device) {
  // Rationale: a large module's key takes a millisecond to digest: connect now so the daemon wakes
  // meanwhile, as when the call connects first, unless a published copy may spare the connection.
  if (source.text().size() >= k_descriptor_worthy_source && !reads_published_copies(m_settings)) {
    auto timer = m_record.step(&jitcache_load_info::ns_lookup);
    (void)m_cache.connect();
  }
  // The key's content digest (SHA-256 based) is computed on other threads while the entry is looked
  // up by the fast key (XXH3-128 of the same bytes); the entry is trusted only if the content
  // digest it records is ours (docs/cache-key.md "The fast key: look up first, verify after").
  std::optional<LoadKey> key;
  {
    auto timer = m_record.step(&jitcache_load_info::ns_key);
    const auto builder = key::KeyBuilder::for_device(device, key::driver_id(m_api));
    if (auto version = builder.check_ptx_version(source.text()); !version) {
      return driver_load(target, image, options, JITCACHE_OUTCOME_UNCACHED_FALLBACK, version.error().message);
    }
    OptionArrays all = options.with(source.embedded, false);
    auto canonical = key::KeyBuilder::options_from_jit(all.count(), all.options_data(), all.values_data());
    if (!canonical) {
      return driver_load(target, image, options, JITCACHE_OUTCOME_UNCACHED_FALLBACK,
                         "uncacheable: " + canonical.error().message);
    }
    auto built = builder.build(source.text(), *canonical, key::KeyBuilder::Digest::in_background);
    if (!built) {
      return driver_load(target, image, options, JITCACHE_OUTCOME_UNCACHED_FALLBACK,
                         "uncacheable: " + built.error().message);
    }
    key.emplace(LoadKey{std::move(*built), m_record});
  }

  // Rationale: before the daemon is asked, and whether or not it answers: a published copy is
  // verified like any hit, so it serves a hit without a round trip and with the daemon down.
  if (m_settings.published) {
    if (auto result = load_published(target, image, options, source, *key)) return *result;
  }
  common::Result<void> connected = [&] {
    auto timer = m_record.step(&jitcache_load_info::ns_lookup);
    return m_cache.connect();
  }();
  if (!connected) {
    // The key id still names the entry this load would have used, for whoever troubleshoots it.
    key->complete();
    return daemon_failed(target, image, options, connected.error());
  }

  // Rationale: a large module's image is worth a HELLO (one round trip to a daemon that has just
  // accepted us) to learn whether it can come as a descriptor, which saves ~1 ms per MB
  // (docs/benchmarks.md); a small one is not.
  auto delivery = transport::ImageDelivery::bytes;
  if (source.text().size() >= k_descriptor_worthy_source) {
    auto capabilities = m_cache.capabilities();
    if (capabilities && (*capabilities & proto::k_capability_image_fd)) {
      delivery = transport::ImageDelivery::descriptor_if_large;
    }
  }
  auto fetched = look_up(*key, delivery);
  if (!fetched) return daemon_failed(target, image, options, fetched.error());
  if (fetched->has_value()) {
    if (auto result = load_hit(target, options, **fetched, key->complete())) return *result;
    return compile_locally(target, image, options, source, *key, true, JITCACHE_OUTCOME_REBUILT_AFTER_FAILED_LOAD);
  }
  return load_miss(target, image, options, source, *key);
}

}  // namespace jitcache::client::loader
