#include <client/src/loader/load_flow.hpp>

#include <vector>

#include <client/src/driver/cu_result_text.hpp>
#include <client/src/driver/driver_identity.hpp>
#include <client/src/driver/load_error_class.hpp>
#include <client/src/fatbin/fatbin_reader.hpp>
#include <client/src/fatbin/image_kind.hpp>
#include <client/src/fatbin/select_image.hpp>
#include <client/src/loader/cached_image_check.hpp>
#include <client/src/loader/key_arch.hpp>
#include <client/src/loader/process_warning.hpp>
#include <client/src/loader/ptx_header.hpp>
#include <jitcache/proto/compile_messages.hpp>
#include <jitcache/proto/content_digest.hpp>
#include <jitcache/proto/jit_options.hpp>
#include <jitcache/proto/key.hpp>

namespace jitcache::client::loader {

namespace {

// Rationale: a compiler log beyond this adds nothing to a one-line reason; the caller's own error
// log buffer receives the whole log from the driver.
constexpr std::size_t k_log_excerpt = 600;
constexpr std::size_t k_private_log_size = 8192;
// PTX at least this large compiles to images the daemon sends as a descriptor (its threshold is
// 64 KiB of image; PTX is typically 2-4x its cubin).
constexpr std::size_t k_descriptor_worthy_source = 256 << 10;

std::string excerpt(std::string_view log) {
  while (!log.empty() && (log.back() == '\n' || log.back() == '\0')) log.remove_suffix(1);
  if (log.size() > k_log_excerpt) return std::string(log.substr(0, k_log_excerpt)) + "…";
  return std::string(log);
}

jitcache_load_stage stage_for(CUresult result) { return static_cast<jitcache_load_stage>(driver::stage_of(result)); }

fatbin::DeviceTarget device_target(const driver::ComputeCapability& cc) {
  fatbin::DeviceTarget target;
  target.major = cc.major;
  target.minor = cc.minor;
  // Arch-specific targets exist from CC 9.0, family targets from CC 10.0 (cuda-notes §1, §3).
  target.arch_specific = cc.sm() >= 90;
  target.family = cc.sm() >= 100;
  return target;
}

std::string producer_name(const driver::DriverApi& api) {
  return "driver " + std::to_string(api.api_version) + "/" + api.build + " (cuLink)";
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
  // Rationale: connecting first lets the daemon accept and set up the connection while the key is
  // being digested; a connection that turns out to be unneeded (an uncacheable load) costs little.
  auto lease = [&] {
    if (m_early_lease) return std::move(*m_early_lease);
    auto timer = m_record.step(&jitcache_load_info::ns_lookup);
    return m_daemon->acquire();
  }();
  // The key's content digest (SHA-256 based) is computed on other threads while the entry is looked
  // up by the fast key (XXH3-128 of the same bytes); the entry is trusted only if the content
  // digest it records is ours (design §3).
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
  auto record_key = [&] {
    auto timer = m_record.step(&jitcache_load_info::ns_key);
    key.content = content->wait();
    m_record.key(proto::to_hex(proto::key_id(key)), key.arch);
  };
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

  const proto::FastKey fast_key = proto::fast_key_of(key, content_fast);
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
    if (auto result = load_hit(module, options, *lease, **fetched, key)) return *result;
    return compile_locally(module, image, options, source, key, hint, &*lease, JITCACHE_OUTCOME_REBUILT_AFTER_FAILED_LOAD);
  }
  return load_miss(module, image, options, source, key, hint, *lease);
}

CUresult LoadFlow::load_miss(CUmodule* module, const void* image, const CallerOptions& options, const PtxSource& source,
                             const proto::KeyFields& key, const StoreHint& hint, DaemonLease& lease) {
  auto capabilities = lease.capabilities();
  if (!capabilities && capabilities.error().reply_status == 0) {
    lease.broken(capabilities.error());
    return daemon_failed(module, image, options, capabilities.error());
  }
  // A daemon that answers HELLO with an error status is alive but says nothing of compiling.
  if (!capabilities || (*capabilities & proto::k_capability_compile) == 0) {
    return compile_locally(module, image, options, source, key, hint, &lease, JITCACHE_OUTCOME_COMPILED_LOCALLY);
  }

  proto::CompileRequest request;
  request.key_schema = key.key_schema;
  request.arch = key.arch;
  request.driver_api = key.driver_api;
  request.driver_build = key.driver_build;
  request.options = key.options;
  request.priority = proto::CompilePriority::interactive;
  request.ptx = proto::as_bytes(source.text());
  const auto wait = m_daemon->settings().compile_timeout;
  auto answer = [&] {
    auto timer = m_record.step(&jitcache_load_info::ns_compile);
    return lease.client().compile(request, wait);
  }();
  using Kind = transport::CompileAnswer::Kind;
  if (!answer) {
    const proto::Error& error = answer.error();
    if (error.code == proto::ErrorCode::timeout) {
      // A compile that outlasts the wait is not a dead daemon: it finishes and stores the image for
      // the next load. This load JITs here, and stores nothing (the daemon will).
      lease.discard();
      m_record.reason("jitcached did not finish compiling within " + std::to_string(wait.count()) +
                      " ms (compile_timeout)");
      return compile_locally(module, image, options, source, key, hint, nullptr, JITCACHE_OUTCOME_COMPILED_LOCALLY);
    }
    if (error.reply_status == 0) {
      lease.broken(error);
      return daemon_failed(module, image, options, error);
    }
    m_record.reason("jitcached refused COMPILE (" + error.message + ")");
    return compile_locally(module, image, options, source, key, hint, &lease, JITCACHE_OUTCOME_COMPILED_LOCALLY);
  }
  switch (answer->kind) {
    case Kind::compiled: {
      const jitcache_load_outcome success = answer->from_store ? JITCACHE_OUTCOME_HIT : JITCACHE_OUTCOME_COMPILED_BY_DAEMON;
      if (auto result = load_hit(module, options, lease, *answer->image, key, success)) return *result;
      return compile_locally(module, image, options, source, key, hint, &lease, JITCACHE_OUTCOME_REBUILT_AFTER_FAILED_LOAD);
    }
    case Kind::compile_error:
      // The driver compiles the same PTX with the caller's options: the caller gets the driver's own
      // error and log (or, should the driver's JIT accept what nvJitLink did not, its module).
      return driver_load(module, image, options, JITCACHE_OUTCOME_UNCACHED_FALLBACK,
                         "jitcached could not compile the PTX (compile_error: " + excerpt(answer->message) +
                             "); loaded with the driver's own JIT");
    case Kind::cannot_compile:
    case Kind::busy:
    case Kind::worker_failed:
      m_record.reason("jitcached did not compile it (" + std::string(transport::compile_answer_name(answer->kind)) +
                      ": " + excerpt(answer->message) + ")");
      return compile_locally(module, image, options, source, key, hint, &lease, JITCACHE_OUTCOME_COMPILED_LOCALLY);
  }
  return compile_locally(module, image, options, source, key, hint, &lease, JITCACHE_OUTCOME_COMPILED_LOCALLY);
}

std::optional<CUresult> LoadFlow::load_hit(CUmodule* module, const CallerOptions& options, DaemonLease& lease,
                                           const transport::FetchedImage& fetched, const proto::KeyFields& key,
                                           jitcache_load_outcome success) {
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
    result = m_api.module_load_data(module, fetched.bytes().data());
  }
  if (result == CUDA_SUCCESS) {
    m_record.outcome(success);
    const std::string what = "loaded " + key.arch + " image " + proto::to_hex(fetched.info.key_id).substr(0, 16) +
                             (success == JITCACHE_OUTCOME_COMPILED_BY_DAEMON ? " compiled by jitcached ("
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
    report.detail = "cuModuleLoadData returned " + driver::describe_result(result);
    auto capabilities = lease.capabilities();
    if (capabilities && (*capabilities & proto::k_capability_report_failure)) {
      auto reported = lease.client().report_failure(report);
      if (reported) {
        ++m_counters.failure_reports;
      } else if (reported.error().reply_status == 0) {
        lease.broken(reported.error());
      }
    } else {
      m_record.append_reason(" (this daemon takes no failure reports; the rebuilt image replaces the entry)");
    }
  }
  return std::nullopt;
}

CUresult LoadFlow::compile_locally(CUmodule* module, const void* image, const CallerOptions& options,
                                   const PtxSource& source, const proto::KeyFields& key, const StoreHint& hint,
                                   DaemonLease* lease, jitcache_load_outcome success_outcome) {
  const std::string previous = std::string(m_record.reason());
  auto fallback = [&](std::string why) {
    if (!previous.empty()) why = previous + "; " + why;
    return driver_load(module, image, options, JITCACHE_OUTCOME_UNCACHED_FALLBACK, why);
  };
  if (!m_api.can_jit()) return fallback("cannot JIT locally: " + m_api.missing_summary());

  OptionArrays link_options = options.with(source.embedded, true);
  // Without a caller's error log the compiler's message would be lost; give the link our own.
  std::vector<char> private_log;
  bool has_error_log = false;
  for (auto option : link_options.options) has_error_log |= option == CU_JIT_ERROR_LOG_BUFFER;
  if (!has_error_log) {
    private_log.assign(k_private_log_size, '\0');
    link_options.options.push_back(CU_JIT_ERROR_LOG_BUFFER);
    link_options.values.push_back(private_log.data());
    link_options.options.push_back(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
    link_options.values.push_back(reinterpret_cast<void*>(private_log.size()));
  }
  auto compiler_log = [&]() -> std::string {
    return has_error_log ? excerpt(options.error_log()) : excerpt(std::string_view(private_log.data()));
  };

  std::vector<std::uint8_t> cubin;
  std::uint64_t compile_time_us = 0;
  {
    auto timer = m_record.step(&jitcache_load_info::ns_compile);
    const auto start = std::chrono::steady_clock::now();
    CUlinkState state = nullptr;
    CUresult result = m_api.link_create(link_options.count(), link_options.options_data(), link_options.values_data(), &state);
    if (result != CUDA_SUCCESS) {
      return fallback("cuLinkCreate returned " + driver::describe_result(result) + "; " + compiler_log());
    }
    std::string name = "jitcache:" + key.arch;
    result = m_api.link_add_data(state, CU_JIT_INPUT_PTX, const_cast<char*>(source.nul_terminated()),
                                 source.text().size() + 1, name.c_str(), 0, nullptr, nullptr);
    void* linked = nullptr;
    std::size_t linked_size = 0;
    if (result == CUDA_SUCCESS) result = m_api.link_complete(state, &linked, &linked_size);
    if (result == CUDA_SUCCESS && linked != nullptr && linked_size > 0) {
      const auto* bytes = static_cast<const std::uint8_t*>(linked);
      cubin.assign(bytes, bytes + linked_size);
    }
    const std::string log = compiler_log();
    m_api.link_destroy(state);
    if (result != CUDA_SUCCESS || cubin.empty()) {
      m_record.stage(stage_for(result), result);
      return fallback("the local JIT (cuLink) returned " + driver::describe_result(result) + (log.empty() ? "" : ": " + log));
    }
    compile_time_us = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count());
  }

  CUresult result = CUDA_SUCCESS;
  {
    auto timer = m_record.step(&jitcache_load_info::ns_load);
    result = m_api.module_load_data(module, cubin.data());
  }
  if (result != CUDA_SUCCESS) {
    if (driver::classify_load_error(result) == driver::LoadErrorClass::resource) {
      m_record.outcome(success_outcome);
      m_record.stage(JITCACHE_STAGE_LOAD, result);
      options.publish(link_options);
      return result;
    }
    m_record.stage(stage_for(result), result);
    return fallback("the locally compiled image failed to load with " + driver::describe_result(result));
  }
  options.publish(link_options);
  m_record.outcome(success_outcome);
  if (success_outcome == JITCACHE_OUTCOME_COMPILED_LOCALLY) {
    m_record.reason(std::string("a miss: ") + (previous.empty() ? "" : previous + "; ") + "compiled with the driver's JIT" +
                    (lease != nullptr ? " and stored" : ""));
  }
  if (lease != nullptr) put(*lease, key, hint, cubin, compile_time_us);
  return CUDA_SUCCESS;
}

void LoadFlow::put(DaemonLease& lease, const proto::KeyFields& key, const StoreHint& hint,
                   const std::vector<std::uint8_t>& cubin, std::uint64_t compile_time_us) {
  auto timer = m_record.step(&jitcache_load_info::ns_put);
  proto::PutRequest request;
  request.key = key;
  request.producer = producer_name(m_api);
  request.compile_time_us = compile_time_us;
  request.image = proto::Bytes(cubin);
  request.content_fast = hint.content_fast;
  auto stored = lease.client().put(request);
  if (stored) {
    ++m_counters.puts;
    return;
  }
  ++m_counters.put_failures;
  m_record.append_reason("; storing it failed: " + stored.error().message);
  if (stored.error().reply_status == 0) lease.broken(stored.error());
}

}  // namespace jitcache::client::loader
