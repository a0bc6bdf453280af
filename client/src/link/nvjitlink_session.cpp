#include <client/src/link/nvjitlink_session.hpp>

#include <chrono>
#include <cstring>

#include <client/src/link/link_cache.hpp>
#include <client/src/link/link_key.hpp>
#include <client/src/loader/load_wording.hpp>
#include <client/src/loader/process_report.hpp>
#include <client/src/loader/process_warning.hpp>
#include <proto/jit_options.hpp>

namespace jitcache::client::link {

namespace {

// nvJitLink.h 13.0's names; the number is kept too, for results a newer library adds.
std::string describe(nvJitLinkResult result) {
  static constexpr const char* k_names[] = {"SUCCESS",
                                            "UNRECOGNIZED_OPTION",
                                            "MISSING_ARCH",
                                            "INVALID_INPUT",
                                            "PTX_COMPILE",
                                            "NVVM_COMPILE",
                                            "INTERNAL",
                                            "THREADPOOL",
                                            "UNRECOGNIZED_INPUT",
                                            "FINALIZE",
                                            "NULL_INPUT",
                                            "INCOMPATIBLE_OPTIONS",
                                            "INCORRECT_INPUT_TYPE",
                                            "ARCH_MISMATCH",
                                            "OUTDATED_LIBRARY",
                                            "MISSING_FATBIN",
                                            "UNRECOGNIZED_ARCH",
                                            "UNSUPPORTED_ARCH",
                                            "LTO_NOT_ENABLED"};
  const auto index = static_cast<unsigned>(result);
  const std::string name = index < std::size(k_names) ? std::string("NVJITLINK_ERROR_") + k_names[index] : "unknown";
  return (index == 0 ? std::string("NVJITLINK_SUCCESS") : name) + " (" + std::to_string(index) + ")";
}

// A load record's result is a CUresult; an nvJitLink failure is recorded as CUDA_ERROR_UNKNOWN with
// nvJitLink's own result in the reason.
CUresult recorded_result(nvJitLinkResult result) {
  return result == NVJITLINK_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
}

std::string producer_name(const proto::DriverId& library) {
  return "nvJitLink " + std::to_string(library.api / 1000) + "." + std::to_string((library.api % 1000) / 10) +
         " (nvJitLinkComplete, " + library.build + ")";
}

std::uint64_t micros_since(std::chrono::steady_clock::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace

NvJitLinkSession::NvJitLinkSession(nvJitLinkHandle real, std::span<const std::string_view> options,
                                   common::Result<proto::DriverId> library)
    : m_real(real) {
  auto canonical = proto::canonicalize_nvjitlink_options(options);
  if (!canonical) {
    m_uncacheable = canonical.error().message;
  } else if (!library) {
    m_uncacheable = library.error().message;
  } else {
    m_options = std::move(*canonical);
    m_library = std::move(*library);
  }
  if (!m_uncacheable.empty()) m_mode = Mode::real;
}

std::string NvJitLinkSession::uncacheable_reason() const {
  std::lock_guard lock(m_mutex);
  return m_uncacheable;
}

nvJitLinkResult NvJitLinkSession::replay(const NvJitLinkEntryPoints& real, const std::string& why) {
  m_mode = Mode::real;
  if (m_uncacheable.empty()) m_uncacheable = why;
  std::vector<LinkInput> inputs = std::move(m_inputs);
  m_inputs.clear();
  for (LinkInput& input : inputs) {
    const nvJitLinkResult result =
        real.add_data(m_real, static_cast<nvJitLinkInputType>(input.given_type), input.buffer(), input.size,
                      input.name.empty() ? nullptr : input.name.c_str());
    if (result != NVJITLINK_SUCCESS) return result;
  }
  return NVJITLINK_SUCCESS;
}

nvJitLinkResult NvJitLinkSession::give_up(const NvJitLinkEntryPoints& real) {
  std::lock_guard lock(m_mutex);
  if (m_mode != Mode::keeping) return NVJITLINK_SUCCESS;
  return replay(real, "a failure inside the cache");
}

nvJitLinkResult NvJitLinkSession::add_data(const NvJitLinkEntryPoints& real, nvJitLinkInputType type, const void* data,
                                           std::size_t size, const char* name) {
  std::lock_guard lock(m_mutex);
  if (m_mode == Mode::served) return NVJITLINK_ERROR_INTERNAL;
  if (m_mode == Mode::keeping) {
    const auto kind = kind_of_nvjitlink_input(type);
    std::string why;
    if (!kind) {
      why = "input type " + std::to_string(static_cast<int>(type)) + " is not one the cache keys";
    } else if (data == nullptr || size == 0) {
      why = "an input without bytes";
    } else if (m_kept_bytes + size > k_max_session_bytes) {
      why = "the inputs pass " + std::to_string(k_max_session_bytes) + " bytes";
    }
    if (why.empty()) {
      LinkInput input = copy_input(*kind, static_cast<int>(type), data, size, name);
      m_kept_bytes += input.size;
      m_inputs.push_back(std::move(input));
      return NVJITLINK_SUCCESS;
    }
    if (const auto replayed = replay(real, why); replayed != NVJITLINK_SUCCESS) return replayed;
  }
  return real.add_data(m_real, type, data, size, name);
}

nvJitLinkResult NvJitLinkSession::add_file(const NvJitLinkEntryPoints& real, nvJitLinkInputType type,
                                           const char* path) {
  std::lock_guard lock(m_mutex);
  if (m_mode == Mode::served) return NVJITLINK_ERROR_INTERNAL;
  if (m_mode == Mode::keeping) {
    const auto kind = kind_of_nvjitlink_input(type);
    std::string why = kind ? "" : "input type " + std::to_string(static_cast<int>(type)) + " is not one the cache keys";
    if (why.empty() && path == nullptr) why = "an input without a path";
    if (why.empty()) {
      auto bytes = read_input_file(path, k_max_session_bytes - m_kept_bytes);
      if (bytes && !bytes->empty()) {
        LinkInput input = copy_input(*kind, static_cast<int>(type), bytes->data(), bytes->size(), path);
        m_kept_bytes += input.size;
        m_inputs.push_back(std::move(input));
        return NVJITLINK_SUCCESS;
      }
      why = bytes ? std::string("an empty input file") : "the input file: " + bytes.error().message;
    }
    if (const auto replayed = replay(real, why); replayed != NVJITLINK_SUCCESS) return replayed;
  }
  return real.add_file(m_real, type, path);
}

nvJitLinkResult NvJitLinkSession::complete(const NvJitLinkEntryPoints& real, const LinkEnvironment& env,
                                           std::string_view entry_point) {
  std::lock_guard lock(m_mutex);
  if (m_mode == Mode::served) return NVJITLINK_ERROR_INTERNAL;
  loader::LoadRecord record;
  nvJitLinkResult result = NVJITLINK_SUCCESS;
  if (m_mode == Mode::real) {
    record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
    record.reason("nvJitLinkComplete, uncacheable: " + m_uncacheable);
    result = real.complete(m_real);
  } else {
    try {
      result = complete_keyed(real, env, record);
    } catch (const std::exception& error) {
      record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
      record.reason(std::string("internal error in the cache (") + error.what() + "): linked without it");
      if (m_mode == Mode::keeping) result = replay(real, "internal error");
      if (result == NVJITLINK_SUCCESS && m_mode == Mode::real) result = real.complete(m_real);
    }
  }
  if (result != NVJITLINK_SUCCESS) record.append_reason("; nvJitLinkComplete returned " + describe(result));
  env.counters.count_outcome(record.outcome());
  record.finish(recorded_result(result));
  loader::ProcessReport::note(record.info(), entry_point, env.settings.quiet);
  return result;
}

nvJitLinkResult NvJitLinkSession::complete_keyed(const NvJitLinkEntryPoints& real, const LinkEnvironment& env,
                                                 loader::LoadRecord& record) {
  if (env.settings.disabled) {
    record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
    record.reason("caching is disabled (" + env.settings.disabled_by + ")");
    return link_for_real(real, env, nullptr, record);
  }
  auto built = [&] {
    auto timer = record.step(&jitcache_load_info::ns_key);
    return build_link_key(m_inputs, m_options->arch, *m_library, proto::nvjitlink_option_text(m_options->keyed));
  }();
  if (!built) {
    record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
    record.reason("nvJitLinkComplete, uncacheable: " + built.error().message);
    return link_for_real(real, env, nullptr, record);
  }
  record.key(proto::to_hex(proto::key_id(built->fields)), built->fields.arch);

  LinkCache cache(env.cache, env.settings, env.counters, record);
  const auto daemon_failed = [&](const common::Error& error) {
    ++env.counters.daemon_unavailable;
    const std::string why = "jitcached at " + env.settings.socket_path + " cannot be used: " + error.message;
    loader::warn_once(why, env.settings.quiet);
    record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
    record.reason(why);
    return link_for_real(real, env, nullptr, record);
  };
  bool published = false;
  auto found = cache.find(*built, published);
  if (!found) {
    if (found.error().reply_status == 0) return daemon_failed(found.error());
    record.reason("jitcached refused the LOOKUP (" + found.error().message + ")");
  } else if (found->has_value()) {
    const transport::FetchedImage& hit = **found;
    const proto::Bytes bytes = hit.bytes();
    record.outcome(JITCACHE_OUTCOME_HIT);
    serve(std::vector<std::uint8_t>(bytes.begin(), bytes.end()),
          "linked " + hit.info.key.arch + " image " + proto::to_hex(hit.info.key_id).substr(0, 16) +
              (published ? " from the cache's published copy (" : " from the cache (") + hit.info.producer + ")",
          record);
    return NVJITLINK_SUCCESS;
  }

  // A miss: the daemon links it when it runs this very nvJitLink (capability bit 9).
  auto compiled = cache.compile(*built, m_inputs);
  if (!compiled) {
    const common::Error& error = compiled.error();
    if (error.code == common::ErrorCode::timeout) {
      // The daemon goes on and stores it; this session links itself and stores nothing.
      record.outcome(JITCACHE_OUTCOME_COMPILED_LOCALLY);
      record.reason("jitcached did not finish linking within " + std::to_string(env.settings.compile_timeout.count()) +
                    " ms (compile_timeout)");
      return link_for_real(real, env, nullptr, record);
    }
    if (error.reply_status == 0) return daemon_failed(error);
    record.reason("jitcached refused COMPILE (" + error.message + ")");
  } else if (compiled->has_value()) {
    transport::CompileAnswer& answer = **compiled;
    using Kind = transport::CompileAnswer::Kind;
    if (answer.kind == Kind::compiled) {
      const proto::Bytes bytes = answer.image->bytes();
      record.outcome(answer.from_store ? JITCACHE_OUTCOME_HIT : JITCACHE_OUTCOME_COMPILED_BY_DAEMON);
      serve(std::vector<std::uint8_t>(bytes.begin(), bytes.end()),
            "linked " + answer.image->info.key.arch + " image " +
                proto::to_hex(answer.image->info.key_id).substr(0, 16) + " by jitcached (" +
                answer.image->info.producer + ")",
            record);
      return NVJITLINK_SUCCESS;
    }
    // compile_error: the program's own link gives it nvJitLink's own error and log; the rest: a
    // miss the daemon did not link.
    record.reason("jitcached did not link it (" + std::string(transport::compile_answer_name(answer.kind)) + ": " +
                  loader::excerpt(answer.message) + ")");
  }
  record.outcome(JITCACHE_OUTCOME_COMPILED_LOCALLY);
  return link_for_real(real, env, &*built, record);
}

void NvJitLinkSession::serve(std::vector<std::uint8_t> cubin, const std::string& what, loader::LoadRecord& record) {
  m_cubin = std::move(cubin);
  m_inputs.clear();
  m_mode = Mode::served;
  record.reason(what);
  // Rationale: without -verbose or -time nvJitLink's info log is empty; a program that prints it
  // unasked should print nothing on a hit either.
  m_info_log = m_options->asks_for_log ? "jitcache: " + what + "\n" : std::string();
}

nvJitLinkResult NvJitLinkSession::link_for_real(const NvJitLinkEntryPoints& real, const LinkEnvironment& env,
                                                const LinkKey* key, loader::LoadRecord& record) {
  const auto start = std::chrono::steady_clock::now();
  nvJitLinkResult result = NVJITLINK_SUCCESS;
  {
    auto timer = record.step(&jitcache_load_info::ns_compile);
    result = replay(real, key != nullptr ? "linked for real (a miss)" : std::string(record.reason()));
    if (result != NVJITLINK_SUCCESS) {
      record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
      record.stage(JITCACHE_STAGE_JIT, CUDA_ERROR_UNKNOWN);
      record.append_reason("; an input failed when it reached nvJitLink: nvJitLinkAddData returned " +
                           describe(result));
      return result;
    }
    result = real.complete(m_real);
  }
  if (result != NVJITLINK_SUCCESS) {
    record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
    record.stage(JITCACHE_STAGE_JIT, CUDA_ERROR_UNKNOWN);
    return result;
  }
  if (key == nullptr) return result;
  std::size_t size = 0;
  if (real.get_linked_cubin_size(m_real, &size) != NVJITLINK_SUCCESS || size == 0) return result;
  std::vector<std::uint8_t> cubin(size);
  if (real.get_linked_cubin(m_real, cubin.data()) != NVJITLINK_SUCCESS) return result;
  const std::string previous(record.reason());
  record.reason(std::string("a miss: ") + (previous.empty() ? "" : previous + "; ") +
                "linked with nvJitLink and stored");
  LinkCache(env.cache, env.settings, env.counters, record)
      .put(*key, proto::Bytes(cubin), producer_name(*m_library), micros_since(start));
  return result;
}

nvJitLinkResult NvJitLinkSession::copy_log(const std::string& log, char* out) {
  if (out == nullptr) return NVJITLINK_ERROR_NULL_INPUT;
  if (!log.empty()) std::memcpy(out, log.c_str(), log.size() + 1);
  return NVJITLINK_SUCCESS;
}

nvJitLinkResult NvJitLinkSession::linked_cubin_size(const NvJitLinkEntryPoints& real, std::size_t* size) {
  std::lock_guard lock(m_mutex);
  if (m_mode != Mode::served) return real.get_linked_cubin_size(m_real, size);
  if (size == nullptr) return NVJITLINK_ERROR_NULL_INPUT;
  *size = m_cubin.size();
  return NVJITLINK_SUCCESS;
}

nvJitLinkResult NvJitLinkSession::linked_cubin(const NvJitLinkEntryPoints& real, void* cubin) {
  std::lock_guard lock(m_mutex);
  if (m_mode != Mode::served) return real.get_linked_cubin(m_real, cubin);
  if (cubin == nullptr) return NVJITLINK_ERROR_NULL_INPUT;
  std::memcpy(cubin, m_cubin.data(), m_cubin.size());
  return NVJITLINK_SUCCESS;
}

nvJitLinkResult NvJitLinkSession::linked_ptx_size(const NvJitLinkEntryPoints& real, std::size_t* size) {
  std::lock_guard lock(m_mutex);
  // Served sessions never had -ptx (it makes a session uncacheable): nvJitLink's answer for them.
  if (m_mode == Mode::served) return NVJITLINK_ERROR_INVALID_INPUT;
  return real.get_linked_ptx_size(m_real, size);
}

nvJitLinkResult NvJitLinkSession::linked_ptx(const NvJitLinkEntryPoints& real, char* ptx) {
  std::lock_guard lock(m_mutex);
  if (m_mode == Mode::served) return NVJITLINK_ERROR_INVALID_INPUT;
  return real.get_linked_ptx(m_real, ptx);
}

nvJitLinkResult NvJitLinkSession::error_log_size(const NvJitLinkEntryPoints& real, std::size_t* size) {
  std::lock_guard lock(m_mutex);
  if (m_mode != Mode::served) return real.get_error_log_size(m_real, size);
  if (size == nullptr) return NVJITLINK_ERROR_NULL_INPUT;
  *size = 0;
  return NVJITLINK_SUCCESS;
}

nvJitLinkResult NvJitLinkSession::error_log(const NvJitLinkEntryPoints& real, char* log) {
  std::lock_guard lock(m_mutex);
  if (m_mode != Mode::served) return real.get_error_log(m_real, log);
  return copy_log(std::string(), log);
}

nvJitLinkResult NvJitLinkSession::info_log_size(const NvJitLinkEntryPoints& real, std::size_t* size) {
  std::lock_guard lock(m_mutex);
  if (m_mode != Mode::served) return real.get_info_log_size(m_real, size);
  if (size == nullptr) return NVJITLINK_ERROR_NULL_INPUT;
  // As nvJitLink counts it: the text and its NUL, 0 for an empty log.
  *size = m_info_log.empty() ? 0 : m_info_log.size() + 1;
  return NVJITLINK_SUCCESS;
}

nvJitLinkResult NvJitLinkSession::info_log(const NvJitLinkEntryPoints& real, char* log) {
  std::lock_guard lock(m_mutex);
  if (m_mode != Mode::served) return real.get_info_log(m_real, log);
  return copy_log(m_info_log, log);
}

}  // namespace jitcache::client::link
