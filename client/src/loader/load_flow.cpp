#include <client/src/loader/load_flow.hpp>

#include <vector>

#include <client/src/driver/cu_result_text.hpp>
#include <client/src/driver/driver_identity.hpp>
#include <client/src/driver/load_error_class.hpp>
#include <client/src/fatbin/fatbin_reader.hpp>
#include <client/src/fatbin/image_kind.hpp>
#include <client/src/fatbin/select_image.hpp>
#include <client/src/loader/key_arch.hpp>
#include <client/src/loader/load_wording.hpp>
#include <client/src/loader/process_warning.hpp>
#include <client/src/loader/ptx_header.hpp>
#include <jitcache/proto/content_digest.hpp>
#include <jitcache/proto/jit_options.hpp>
#include <jitcache/proto/key.hpp>

namespace jitcache::client::loader {

namespace {

// PTX at least this large compiles to images the daemon sends as a descriptor (its threshold is
// 64 KiB of image; PTX is typically 2-4x its cubin).
constexpr std::size_t k_descriptor_worthy_source = 256 << 10;

fatbin::DeviceTarget device_target(const driver::ComputeCapability& cc) {
  fatbin::DeviceTarget target;
  target.major = cc.major;
  target.minor = cc.minor;
  // Arch-specific targets exist from CC 9.0, family targets from CC 10.0 (docs/driver-facts.md §1, §3).
  target.arch_specific = cc.sm() >= 90;
  target.family = cc.sm() >= 100;
  return target;
}

}  // namespace

CUresult LoadFlow::driver_load(CUmodule* module, const void* image, const CallerOptions& options,
                               jitcache_load_outcome outcome, std::string_view why) {
  m_record.outcome(outcome);
  m_record.reason(why);
  OptionArrays given = options.as_given();
  CUresult result = CUDA_SUCCESS;
  {
    auto timer = m_record.step(&jitcache_load_info::ns_load);
    result = m_api.module_load_data_ex(module, image, given.count(), given.options_data(), given.values_data());
  }
  options.publish(given);
  if (result != CUDA_SUCCESS) {
    m_record.stage(stage_for(result), result);
    m_record.append_reason("; the driver's load returned " + driver::describe_result(result));
    if (auto log = excerpt(options.error_log()); !log.empty()) m_record.append_reason(": " + log);
  }
  return result;
}

CUresult LoadFlow::daemon_failed(CUmodule* module, const void* image, const CallerOptions& options,
                                 const proto::Error& error) {
  ++m_counters.daemon_unavailable;
  const std::string why = "jitcached at " + m_daemon->settings().socket_path + " cannot be used: " + error.message;
  warn_once(why, m_daemon->settings().quiet);
  return driver_load(module, image, options, JITCACHE_OUTCOME_UNCACHED_FALLBACK, why);
}

CUresult LoadFlow::load(CUmodule* module, const void* image, const CallerOptions& options) {
  if (module == nullptr || image == nullptr || !options.well_formed()) {
    // Handed over exactly as received (null arrays included), so the answer is the driver's own.
    m_record.outcome(JITCACHE_OUTCOME_PASS_THROUGH);
    m_record.reason("invalid arguments: the driver's answer is returned");
    const CUresult result = m_api.module_load_data_ex(module, image, options.count(), options.raw_options(),
                                                      options.raw_values());
    if (result != CUDA_SUCCESS) m_record.stage(stage_for(result), result);
    return result;
  }
  if (m_daemon->settings().disabled) {
    return driver_load(module, image, options, JITCACHE_OUTCOME_UNCACHED_FALLBACK,
                       "caching is disabled (" + m_daemon->settings().disabled_by + ")");
  }

  PtxSource source;
  std::optional<driver::ComputeCapability> device;
  auto query_device = [&]() -> bool {
    auto cc = driver::current_device_capability(m_api);
    if (!cc) return false;
    device = *cc;
    return true;
  };
  {
    auto timer = m_record.step(&jitcache_load_info::ns_classify);
    auto view = fatbin::classify_image(image);
    if (!view) {
      return driver_load(module, image, options, JITCACHE_OUTCOME_PASS_THROUGH,
                         "image not recognised (" + view.error().message + "): handed to the driver as given");
    }
    if (view->kind == fatbin::ImageKind::cubin) {
      return driver_load(module, image, options, JITCACHE_OUTCOME_PASS_THROUGH, "a cubin: nothing to compile");
    }
    if (view->kind == fatbin::ImageKind::ptx) {
      source.borrowed = std::string_view(reinterpret_cast<const char*>(view->bytes.data()), view->bytes.size());
    } else {
      auto parsed = fatbin::read_fatbin(view->bytes);
      if (!parsed) {
        return driver_load(module, image, options, JITCACHE_OUTCOME_PASS_THROUGH,
                           "fat binary not understood (" + parsed.error().message + "): handed to the driver as given");
      }
      if (!query_device()) {
        return driver_load(module, image, options, JITCACHE_OUTCOME_PASS_THROUGH,
                           "no current device to select an image for: handed to the driver as given");
      }
      const auto isa = driver::max_ptx_isa(m_api.api_version);
      auto selected = fatbin::select_image(parsed->entries, device_target(*device), {isa.major, isa.minor});
      if (!selected) {
        m_record.stage(JITCACHE_STAGE_IMAGE, CUDA_ERROR_NO_BINARY_FOR_GPU);
        return driver_load(module, image, options, JITCACHE_OUTCOME_PASS_THROUGH, selected.error().message);
      }
      const fatbin::Entry& entry = parsed->entries[selected->entry_index];
      if (selected->action == fatbin::Action::load_cubin) {
        return driver_load(module, image, options, JITCACHE_OUTCOME_PASS_THROUGH,
                           "the fat binary holds a cubin for this device (" + fatbin::describe(entry) + ")");
      }
      auto embedded = parse_embedded_ptxas_options(entry.ptxas_options);
      if (!embedded) {
        return driver_load(module, image, options, JITCACHE_OUTCOME_UNCACHED_FALLBACK,
                           "uncacheable: " + embedded.error().message);
      }
      source.embedded = std::move(*embedded);
      // The entry's PTX lives in the fat binary (or our decompressed copy) and need not end in a
      // NUL inside it; cuLinkAddData needs one.
      source.copy = std::string(entry.ptx_text());
    }
  }
  if (!device && !query_device()) {
    return driver_load(module, image, options, JITCACHE_OUTCOME_PASS_THROUGH,
                       "no current device (cuCtxGetDevice failed): handed to the driver as given");
  }
  return load_ptx(module, image, options, std::move(source), *device);
}

CUresult LoadFlow::load_ptx(CUmodule* module, const void* image, const CallerOptions& options, PtxSource source,
                            const driver::ComputeCapability& device) {
  // The connection the call opened first thing (c_api.cpp), or one made when first needed: a hit
  // from the daemon's published copy needs none.
  std::optional<proto::Result<DaemonLease>> lease_slot;
  if (m_early_lease) lease_slot = std::move(*m_early_lease);
  auto connect = [&]() -> proto::Result<DaemonLease>& {
    if (!lease_slot) {
      auto timer = m_record.step(&jitcache_load_info::ns_lookup);
      lease_slot = m_daemon->acquire();
    }
    return *lease_slot;
  };
  // Rationale: a large module's image is above publish_max_image (1 MiB) and its key takes a
  // millisecond to digest: connect now so the daemon wakes meanwhile, as when the call connects first.
  if (source.text().size() >= k_descriptor_worthy_source) (void)connect();
  // The key's content digest (SHA-256 based) is computed on other threads while the entry is looked
  // up by the fast key (XXH3-128 of the same bytes); the entry is trusted only if the content
  // digest it records is ours (docs/cache-key.md "The fast key: look up first, verify after").
  proto::KeyFields key;
  std::optional<proto::ContentDigestTask> content;
  proto::Checksum128 content_fast;
  {
    auto timer = m_record.step(&jitcache_load_info::ns_key);
    const PtxHeader header = read_ptx_header(source.text());
    const auto isa = driver::max_ptx_isa(m_api.api_version);
    if (header.version_major && header.version_minor &&
        (*header.version_major > isa.major || (*header.version_major == isa.major && *header.version_minor > isa.minor))) {
      return driver_load(module, image, options, JITCACHE_OUTCOME_UNCACHED_FALLBACK,
                         "PTX ISA " + std::to_string(*header.version_major) + "." + std::to_string(*header.version_minor) +
                             " is newer than this driver (API " + std::to_string(m_api.api_version) + ") JIT-compiles (" +
                             std::to_string(isa.major) + "." + std::to_string(isa.minor) + ")");
    }
    OptionArrays all = options.with(source.embedded, false);
    auto canonical = proto::canonicalize_options(all.count(), reinterpret_cast<const int*>(all.options_data()),
                                                 all.values_data());
    if (!canonical) {
      return driver_load(module, image, options, JITCACHE_OUTCOME_UNCACHED_FALLBACK,
                         "uncacheable: " + canonical.error().message);
    }
    key.arch = key_arch(device, canonical->target_arch, header.target);
    key.driver_api = static_cast<std::uint32_t>(m_api.api_version);
    key.driver_build = m_api.build;
    key.options = canonical->text;
    content.emplace(proto::as_bytes(source.text()));
    content_fast = proto::xxh3_128(proto::as_bytes(source.text()));
    if (auto valid = proto::validate_fast_key(proto::fast_key_of(key, content_fast)); !valid) {
      return driver_load(module, image, options, JITCACHE_OUTCOME_UNCACHED_FALLBACK,
                         "uncacheable: " + valid.error().message);
    }
  }
  // Once per load: the published copy and the LOOKUP may each need the digest first.
  bool key_recorded = false;
  auto record_key = [&] {
    if (key_recorded) return;
    key_recorded = true;
    auto timer = m_record.step(&jitcache_load_info::ns_key);
    key.content = content->wait();
    m_record.key(proto::to_hex(proto::key_id(key)), key.arch);
  };
  const proto::FastKey fast_key = proto::fast_key_of(key, content_fast);
  // Rationale: before the daemon is asked, and whether or not it answers: a published copy is
  // verified like any hit, so it serves a hit without a round trip and with the daemon down.
  if (m_daemon->settings().published) {
    const LeaseSource lease_if_any = [&]() -> DaemonLease* {
      auto& lease = connect();
      return lease ? &*lease : nullptr;
    };
    if (auto result = load_published(module, image, options, source, key, fast_key, record_key, lease_if_any)) {
      return *result;
    }
  }
  proto::Result<DaemonLease>& lease = connect();
  if (!lease) {
    // The key id still names the entry this load would have used, for whoever troubleshoots it.
    record_key();
    return daemon_failed(module, image, options, lease.error());
  }

  // The daemon's answer to a lookup, or its failure; `call` is one DaemonClient lookup.
  auto ask = [&](auto call) -> proto::Result<std::optional<transport::FetchedImage>> {
    auto timer = m_record.step(&jitcache_load_info::ns_lookup);
    auto fetched = call(lease->client());
    if (!fetched && fetched.error().code == proto::ErrorCode::too_large && fetched.error().reply_status == 0) {
      // An image above the default reply limit: HELLO learns this daemon's limit, on a fresh
      // connection (the refused reply is still unread on this one).
      lease->discard();
      lease = m_daemon->acquire();
      if (!lease) return lease.error();
      if (auto hello = lease->capabilities(); !hello) return hello.error();
      fetched = call(lease->client());
    }
    return fetched;
  };
  // Rationale: a large module's image is worth a HELLO (one round trip to a daemon that has just
  // accepted us) to learn whether it can come as a descriptor, which saves ~1 ms per MB
  // (docs/benchmarks.md); a small one is not.
  auto delivery = transport::ImageDelivery::bytes;
  if (source.text().size() >= k_descriptor_worthy_source) {
    auto capabilities = lease->capabilities();
    if (capabilities && (*capabilities & proto::k_capability_image_fd)) {
      delivery = transport::ImageDelivery::descriptor_if_large;
    }
  }
  auto by_key = [&](transport::DaemonClient& client) { return client.lookup(key, delivery); };

  auto fetched = ask([&](transport::DaemonClient& client) { return client.lookup_fast(fast_key, delivery); });
  // A daemon older than fast keys refuses selector 2 as a bad request; it still knows the key.
  const bool fast_keys_known =
      fetched || fetched.error().reply_status != static_cast<std::uint16_t>(proto::Status::bad_request);
  record_key();
  if (!fast_keys_known) {
    fetched = ask(by_key);
  } else if (fetched && fetched->has_value() && (*fetched)->info.key.content != key.content) {
    ++m_counters.fast_key_mismatches;
    fetched = ask(by_key);
  } else if (fetched && !fetched->has_value()) {
    // Entries stored without a fast key (by an older client, or the CLI) are found by key only.
    fetched = ask(by_key);
  }
  if (!lease) return daemon_failed(module, image, options, lease.error());
  if (!fetched) {
    // A daemon that answered with a status (busy, draining) is alive: skip it for this load only.
    if (fetched.error().reply_status == 0) lease->broken(fetched.error());
    return daemon_failed(module, image, options, fetched.error());
  }
  const StoreHint hint{fast_keys_known ? std::optional(content_fast) : std::nullopt};
  if (fetched->has_value()) {
    if (auto result = load_hit(module, options, [&] { return &*lease; }, **fetched, key)) return *result;
    return compile_locally(module, image, options, source, key, hint, &*lease, JITCACHE_OUTCOME_REBUILT_AFTER_FAILED_LOAD);
  }
  return load_miss(module, image, options, source, key, hint, *lease);
}

}  // namespace jitcache::client::loader
