#include <client/src/link/cu_link_session.hpp>

#include <chrono>
#include <string_view>

#include <client/src/driver/cu_result_text.hpp>
#include <client/src/driver/device_query.hpp>
#include <client/src/key/key_arch.hpp>
#include <client/src/key/key_builder.hpp>
#include <client/src/key/ptx_header.hpp>
#include <client/src/link/link_cache.hpp>
#include <client/src/link/link_key.hpp>
#include <client/src/loader/load_wording.hpp>
#include <client/src/loader/process_report.hpp>
#include <client/src/loader/process_warning.hpp>

namespace jitcache::client::link {

namespace {

std::string_view text_of(const LinkInput& input) {
  return std::string_view(reinterpret_cast<const char*>(input.bytes.data()), input.size);
}

std::string producer_name(const driver::DriverApi& api) {
  return "driver " + std::to_string(api.api_version) + "/" + api.build + " (cuLinkComplete)";
}

std::uint64_t micros_since(std::chrono::steady_clock::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count());
}

// Why the create options cannot be keyed; "" when they can.
std::string create_keyability(unsigned count, CUjit_option* options, void** values,
                              std::optional<proto::CanonicalOptions>& canonical) {
  if (count > 0 && (options == nullptr || values == nullptr)) return "the option arrays are null";
  for (unsigned i = 0; i < count; ++i) {
    // Rationale: THREADS_PER_BLOCK is IN/OUT (the driver writes back the count it targeted), which a
    // hit cannot reproduce; FALLBACK_STRATEGY is refused by cuLinkCreate (cuda.h), so its answer is
    // the driver's to give.
    if (options[i] == CU_JIT_THREADS_PER_BLOCK) return "CU_JIT_THREADS_PER_BLOCK is an output a hit cannot fill";
    if (options[i] == CU_JIT_FALLBACK_STRATEGY) return "CU_JIT_FALLBACK_STRATEGY is not a link option";
  }
  auto text = proto::canonicalize_options(count, reinterpret_cast<const int*>(options), values);
  if (!text) return text.error().message;
  canonical = std::move(*text);
  return {};
}

}  // namespace

CuLinkSession::CuLinkSession(const CuLinkEntryPoints& family, CUlinkState real, unsigned count, CUjit_option* options,
                             void** values)
    : m_family(family), m_real(real), m_caller(count, options, values) {
  m_uncacheable = create_keyability(count, options, values, m_create_options);
  if (!m_uncacheable.empty()) m_mode = Mode::real;
}

std::string CuLinkSession::uncacheable_reason() const {
  std::lock_guard lock(m_mutex);
  return m_uncacheable;
}

std::string CuLinkSession::keyability(CUjitInputType type, const void* data, std::size_t size, unsigned count,
                                      CUjit_option* options, void** values, proto::LinkInputKind& kind,
                                      std::string& canonical) const {
  auto known = kind_of_cu_input(type);
  if (!known) return "input type " + std::to_string(static_cast<int>(type)) + " is not one the cache keys";
  kind = *known;
  if (data == nullptr || size == 0) return "an input without bytes";
  if (m_kept_bytes + size > k_max_session_bytes)
    return "the inputs pass " + std::to_string(k_max_session_bytes) + " bytes";
  if (count > 0 && (options == nullptr || values == nullptr)) return "an input's option arrays are null";
  for (unsigned i = 0; i < count; ++i) {
    // cuLinkAddData takes compiler options only (cuda.h); a log buffer, wall time or target there is
    // the driver's to judge, and a key could not say what it did.
    if (!proto::is_keyed_jit_option(options[i]) || options[i] == CU_JIT_THREADS_PER_BLOCK) {
      return "input option " + std::to_string(static_cast<int>(options[i])) + " is not a keyed compiler option";
    }
  }
  auto text = proto::canonicalize_options(count, reinterpret_cast<const int*>(options), values);
  if (!text) return "an input's options: " + text.error().message;
  canonical = std::move(text->text);
  return {};
}

void CuLinkSession::keep(LinkInput input, unsigned count, CUjit_option* options, void** values) {
  if (count > 0) {
    input.jit_options.assign(options, options + count);
    input.jit_values.assign(values, values + count);
  }
  m_kept_bytes += input.size;
  m_inputs.push_back(std::move(input));
}

CUresult CuLinkSession::replay(const CuLinkEntryPoints& real, const std::string& why) {
  m_mode = Mode::real;
  if (m_uncacheable.empty()) m_uncacheable = why;
  std::vector<LinkInput> inputs = std::move(m_inputs);
  m_inputs.clear();
  for (LinkInput& input : inputs) {
    const CUresult result = real.add_data(m_real, static_cast<CUjitInputType>(input.given_type), input.buffer(),
                                          input.size, input.name.empty() ? nullptr : input.name.c_str(),
                                          static_cast<unsigned>(input.jit_options.size()),
                                          input.jit_options.empty() ? nullptr : input.jit_options.data(),
                                          input.jit_values.empty() ? nullptr : input.jit_values.data());
    if (result != CUDA_SUCCESS) return result;
  }
  return CUDA_SUCCESS;
}

CUresult CuLinkSession::give_up(const CuLinkEntryPoints& real) {
  std::lock_guard lock(m_mutex);
  if (m_mode != Mode::keeping) return CUDA_SUCCESS;
  return replay(real, "a failure inside the cache");
}

CUresult CuLinkSession::add_data(const CuLinkEntryPoints& real, CUjitInputType type, void* data, std::size_t size,
                                 const char* name, unsigned count, CUjit_option* options, void** values) {
  std::lock_guard lock(m_mutex);
  if (m_mode == Mode::keeping) {
    proto::LinkInputKind kind{};
    std::string canonical;
    const std::string why = keyability(type, data, size, count, options, values, kind, canonical);
    if (why.empty()) {
      LinkInput input = copy_input(kind, static_cast<int>(type), data, size, name);
      input.canonical_options = std::move(canonical);
      keep(std::move(input), count, options, values);
      return CUDA_SUCCESS;
    }
    if (const CUresult replayed = replay(real, why); replayed != CUDA_SUCCESS) return replayed;
  } else if (m_mode == Mode::served) {
    // An input after a served Complete: the real state gets every input, so that what follows is
    // the driver's behaviour for a state with these inputs (the image handed out stays valid).
    if (const CUresult replayed = replay(real, "an input was added after Complete"); replayed != CUDA_SUCCESS) {
      return replayed;
    }
  }
  return real.add_data(m_real, type, data, size, name, count, options, values);
}

CUresult CuLinkSession::add_file(const CuLinkEntryPoints& real, CUjitInputType type, const char* path, unsigned count,
                                 CUjit_option* options, void** values) {
  std::lock_guard lock(m_mutex);
  if (m_mode == Mode::keeping && path != nullptr) {
    auto bytes = read_input_file(path, k_max_session_bytes - m_kept_bytes);
    proto::LinkInputKind kind{};
    std::string canonical;
    std::string why = bytes ? keyability(type, bytes->data(), bytes->size(), count, options, values, kind, canonical)
                            : "the input file: " + bytes.error().message;
    if (why.empty()) {
      LinkInput input = copy_input(kind, static_cast<int>(type), bytes->data(), bytes->size(), path);
      input.canonical_options = std::move(canonical);
      keep(std::move(input), count, options, values);
      return CUDA_SUCCESS;
    }
    if (const CUresult replayed = replay(real, why); replayed != CUDA_SUCCESS) return replayed;
  } else if (m_mode == Mode::keeping || m_mode == Mode::served) {
    if (const CUresult replayed = replay(real, "an input without a path"); replayed != CUDA_SUCCESS) return replayed;
  }
  return real.add_file(m_real, type, path, count, options, values);
}

CUresult CuLinkSession::complete(const CuLinkEntryPoints& called, const LinkEnvironment& env, void** cubin,
                                 std::size_t* size, std::string_view entry_point) {
  std::lock_guard lock(m_mutex);
  CuLinkEntryPoints real = m_family;
  real.complete = called.complete;
  loader::LoadRecord record;
  CUresult result = CUDA_SUCCESS;
  if (m_mode == Mode::served) {
    // A second Complete of a served session hands out the same image, as the driver's state does.
    if (cubin == nullptr || size == nullptr) return real.complete(m_real, cubin, size);
    *cubin = m_cubin.data();
    *size = m_cubin.size();
    record.outcome(JITCACHE_OUTCOME_HIT);
    record.reason("cuLinkComplete again: the image the cache served before");
  } else if (m_mode == Mode::real) {
    record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
    record.reason("cuLinkComplete, uncacheable: " + m_uncacheable);
    result = real.complete(m_real, cubin, size);
    if (result != CUDA_SUCCESS) record.stage(loader::stage_for(result), result);
  } else {
    try {
      result = complete_keyed(real, env, cubin, size, record);
    } catch (const std::exception& error) {
      // Rationale: a failure inside the cache (no memory) must not fail the program's link.
      record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
      record.reason(std::string("internal error in the cache (") + error.what() + "): linked without it");
      result = m_mode == Mode::keeping ? replay(real, "internal error") : CUDA_SUCCESS;
      if (result == CUDA_SUCCESS && m_mode != Mode::served) result = real.complete(m_real, cubin, size);
    }
  }
  env.counters.count_outcome(record.outcome());
  record.finish(result);
  loader::ProcessReport::note(record.info(), entry_point, env.settings.quiet);
  return result;
}

common::Result<LinkKey> CuLinkSession::key(const LinkEnvironment& env) const {
  if (env.driver == nullptr) {
    return common::make_error(common::ErrorCode::unavailable, "the driver could not be opened for the key");
  }
  auto device = driver::current_device_capability(*env.driver);
  JITCACHE_TRY(device);
  std::optional<fatbin::Arch> ptx_target;
  for (const LinkInput& input : m_inputs) {
    if (input.kind != proto::LinkInputKind::ptx) continue;
    ptx_target = key::read_ptx_header(text_of(input)).target;
    if (ptx_target) break;
  }
  std::string arch = key::key_arch(*device, m_create_options->target_arch, ptx_target);
  return build_link_key(m_inputs, std::move(arch), key::driver_id(*env.driver),
                        proto::cu_link_option_text(m_create_options->text));
}

CUresult CuLinkSession::complete_keyed(const CuLinkEntryPoints& real, const LinkEnvironment& env, void** cubin,
                                       std::size_t* size, loader::LoadRecord& record) {
  if (cubin == nullptr || size == nullptr) {
    record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
    record.reason("cuLinkComplete without output pointers: the driver's answer is returned");
    return link_for_real(real, env, nullptr, cubin, size, record);
  }
  if (env.settings.disabled) {
    record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
    record.reason("caching is disabled (" + env.settings.disabled_by + ")");
    return link_for_real(real, env, nullptr, cubin, size, record);
  }
  auto built = [&] {
    auto timer = record.step(&jitcache_load_info::ns_key);
    return key(env);
  }();
  if (!built) {
    record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
    record.reason("cuLinkComplete, uncacheable: " + built.error().message);
    return link_for_real(real, env, nullptr, cubin, size, record);
  }
  record.key(proto::to_hex(proto::key_id(built->fields)), built->fields.arch);

  LinkCache cache(env.cache, env.settings, env.counters, record);
  bool published = false;
  auto found = cache.find(*built, published);
  if (!found) {
    if (found.error().reply_status == 0) {
      ++env.counters.daemon_unavailable;
      const std::string why = "jitcached at " + env.settings.socket_path + " cannot be used: " + found.error().message;
      loader::warn_once(why, env.settings.quiet);
      record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
      record.reason(why);
      return link_for_real(real, env, nullptr, cubin, size, record);
    }
    record.reason("jitcached refused the LOOKUP (" + found.error().message + ")");
  } else if (found->has_value()) {
    return serve(**found, published, cubin, size, record);
  }
  record.outcome(JITCACHE_OUTCOME_COMPILED_LOCALLY);
  return link_for_real(real, env, &*built, cubin, size, record);
}

CUresult CuLinkSession::serve(const transport::FetchedImage& fetched, bool published, void** cubin, std::size_t* size,
                              loader::LoadRecord& record) {
  const proto::Bytes bytes = fetched.bytes();
  m_cubin.assign(bytes.begin(), bytes.end());
  m_inputs.clear();
  m_mode = Mode::served;
  *cubin = m_cubin.data();
  *size = m_cubin.size();
  record.outcome(JITCACHE_OUTCOME_HIT);
  const std::string what =
      "linked " + fetched.info.key.arch + " image " + proto::to_hex(fetched.info.key_id).substr(0, 16) +
      (published ? " from the cache's published copy (" : " from the cache (") + fetched.info.producer + ")";
  record.reason(what);
  m_caller.fill_logs("jitcache: " + what, "", record.elapsed_ms());
  return CUDA_SUCCESS;
}

CUresult CuLinkSession::link_for_real(const CuLinkEntryPoints& real, const LinkEnvironment& env, const LinkKey* key,
                                      void** cubin, std::size_t* size, loader::LoadRecord& record) {
  const auto start = std::chrono::steady_clock::now();
  CUresult result = CUDA_SUCCESS;
  {
    auto timer = record.step(&jitcache_load_info::ns_compile);
    result = replay(real, key != nullptr ? "linked for real (a miss)" : std::string(record.reason()));
    if (result != CUDA_SUCCESS) {
      record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
      record.stage(loader::stage_for(result), result);
      record.append_reason("; an input failed when it reached the driver: cuLinkAddData returned " +
                           driver::describe_result(result));
      if (auto log = loader::excerpt(m_caller.error_log()); !log.empty()) record.append_reason(": " + log);
      return result;
    }
    result = real.complete(m_real, cubin, size);
  }
  if (result != CUDA_SUCCESS) {
    record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
    record.stage(loader::stage_for(result), result);
    record.append_reason("; cuLinkComplete returned " + driver::describe_result(result));
    if (auto log = loader::excerpt(m_caller.error_log()); !log.empty()) record.append_reason(": " + log);
    return result;
  }
  if (key == nullptr || *cubin == nullptr || *size == 0) return result;
  const std::string previous(record.reason());
  record.reason(std::string("a miss: ") + (previous.empty() ? "" : previous + "; ") +
                "linked with the driver and stored");
  LinkCache(env.cache, env.settings, env.counters, record)
      .put(*key, proto::Bytes(static_cast<const std::uint8_t*>(*cubin), *size), producer_name(*env.driver),
           micros_since(start));
  return result;
}

}  // namespace jitcache::client::link
