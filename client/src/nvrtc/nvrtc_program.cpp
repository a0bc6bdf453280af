#include <client/src/nvrtc/nvrtc_program.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>

#include <client/src/loader/load_record.hpp>
#include <client/src/loader/process_report.hpp>
#include <client/src/loader/process_warning.hpp>
#include <client/src/nvrtc/compile_lock.hpp>
#include <client/src/nvrtc/include_scan.hpp>
#include <client/src/nvrtc/macro_named_includes.hpp>
#include <client/src/nvrtc/nvrtc_identity.hpp>
#include <client/src/nvrtc/program_name_use.hpp>
#include <proto/nvrtc_answers.hpp>
#include <proto/nvrtc_compile_messages.hpp>
#include <proto/nvrtc_daemon_eligibility.hpp>
#include <proto/nvrtc_key.hpp>
#include <proto/nvrtc_options.hpp>
#include <proto/nvrtc_program_directory.hpp>

namespace jitcache::client::nvrtc {

namespace {

// The daemon's NVRTC is not this process's (it said so once): NVRTC_COMPILE is not asked again.
// Rationale: a process holds one NVRTC, mostly, and the daemon one; a request costs the program's
// bytes over the socket, so one refusal for another NVRTC is enough per process.
std::atomic<bool> g_daemon_nvrtc_differs{false};

// A load record's result is a CUresult; an NVRTC failure is CUDA_ERROR_UNKNOWN, NVRTC's own result
// in the reason.
CUresult recorded_result(nvrtcResult result) { return result == NVRTC_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN; }

std::uint64_t micros_since(std::chrono::steady_clock::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count());
}

// Why options could not be keyed: a side-effect option if any is one, else an option the table
// lacks (or a malformed array).
proto::NvrtcUncachedReason option_reason(int count, const char* const* options) {
  for (int i = 0; options != nullptr && i < count; ++i) {
    if (options[i] != nullptr &&
        proto::classify_nvrtc_option(options[i]).kind == proto::NvrtcOptionClass::side_effect) {
      return proto::NvrtcUncachedReason::side_effect_option;
    }
  }
  return proto::NvrtcUncachedReason::unknown_option;
}

// Whether an option's text holds `text` (an -I or -D naming the program's directory).
bool options_hold(int count, const char* const* options, std::string_view text) {
  for (int i = 0; i < count; ++i) {
    if (options[i] != nullptr && std::string_view(options[i]).find(text) != std::string_view::npos) return true;
  }
  return false;
}

// A directory beside `directory` (the same parent, so "../" leads where it led) that no one can
// have made or foreseen: where the witness compile names its program.
std::string witness_directory(std::string_view directory) {
  std::random_device random;
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out(directory);
  out += "-jitcache-witness-";
  for (int i = 0; i < 16; ++i) out.push_back(k_hex[random() % 16]);
  return out;
}

std::string working_directory() {
  std::string buffer(4096, '\0');
  if (::getcwd(buffer.data(), buffer.size()) == nullptr) return "?";
  buffer.resize(std::strlen(buffer.c_str()));
  return buffer;
}

}  // namespace

NvrtcProgram::NvrtcProgram(nvrtcProgram real, std::string name, std::string source,
                           std::vector<std::pair<std::string, std::string>> headers)
    : m_real(real), m_name(std::move(name)), m_source(std::move(source)), m_headers(std::move(headers)) {}

bool NvrtcProgram::served() const {
  std::lock_guard lock(m_mutex);
  return m_served.has_value();
}

nvrtcResult NvrtcProgram::add_name_expression(const NvrtcEntryPoints& real, const char* expression) {
  std::lock_guard lock(m_mutex);
  if (m_served) return NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION;
  const nvrtcResult result = real.add_name_expression(m_real, expression);
  if (result == NVRTC_SUCCESS && expression != nullptr && !m_compiled) m_expressions.emplace_back(expression);
  return result;
}

nvrtcResult NvrtcProgram::compile(const NvrtcEntryPoints& real, int count, const char* const* options,
                                  const link::LinkEnvironment& env) {
  std::lock_guard lock(m_mutex);
  loader::LoadRecord record;
  nvrtcResult result = NVRTC_SUCCESS;
  m_uncached.reset();
  m_daemon_down = false;
  if (m_compiled) {
    // A second compile of one program: NVRTC's own, and the program is NVRTC's from here on.
    m_served.reset();
    record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
    record.reason("nvrtcCompileProgram, uncacheable: the program was compiled before");
    m_uncached = proto::NvrtcUncachedReason::compiled_before;
    result = real.compile(m_real, count, options);
  } else {
    try {
      result = compile_keyed(real, count, options, env, record);
    } catch (const std::exception& error) {
      m_served.reset();
      record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
      record.reason(std::string("internal error in the cache (") + error.what() + "): compiled without it");
      m_uncached = proto::NvrtcUncachedReason::internal_error;
      result = real.compile(m_real, count, options);
    }
  }
  m_compiled = true;
  if (m_uncached) note_uncached(env, *m_uncached);
  if (result != NVRTC_SUCCESS) record.append_reason("; nvrtcCompileProgram returned " + std::to_string(result));
  env.counters.count_outcome(record.outcome());
  record.finish(recorded_result(result));
  loader::ProcessReport::note(record.info(), "nvrtcCompileProgram", env.settings.quiet);
  return result;
}

nvrtcResult NvrtcProgram::compile_keyed(const NvrtcEntryPoints& real, int count, const char* const* options,
                                        const link::LinkEnvironment& env, loader::LoadRecord& record) {
  const auto uncached = [&](const std::string& why, proto::NvrtcUncachedReason reason) {
    m_uncached = reason;
    record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
    record.reason("nvrtcCompileProgram, uncacheable: " + why);
    return real.compile(m_real, count, options);
  };
  if (env.settings.disabled) {
    record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
    record.reason("nvrtcCompileProgram, uncacheable: caching is disabled (" + env.settings.disabled_by + ")");
    return real.compile(m_real, count, options);
  }
  proto::NvrtcCompileInput input;
  // The key relative to the program's directory, where the output cannot hold the name
  // (proto/nvrtc_program_directory.hpp): what CuPy's temporary names share.
  std::optional<std::string> relative_record;
  std::string key_note;     // which key and why, for the report
  std::string definitions;  // the -D options' definitions_text
  {
    auto timer = record.step(&jitcache_load_info::ns_key);
    auto canonical = proto::canonicalize_nvrtc_options(count, options);
    if (!canonical) return uncached(canonical.error().message, option_reason(count, options));
    auto identity = nvrtc_identity(reinterpret_cast<const void*>(real.compile),
                                   reinterpret_cast<int (*)(int*, int*)>(real.version));
    if (!identity) return uncached(identity.error().message, proto::NvrtcUncachedReason::unreadable_library);
    auto included = scan_includes({m_name, m_source, m_headers, canonical->include_paths, canonical->pre_includes},
                                  defined_by_options(canonical->keyed));
    if (!included) return uncached(included.error().message, proto::NvrtcUncachedReason::unnamed_include);
    input.identity = *identity;
    input.name = m_name;
    input.source = m_source;
    input.headers = m_headers;
    input.options = std::move(*canonical);
    input.name_expressions = m_expressions;
    input.include_record = std::move(included->text);
    if (input.options.debug_info) input.working_directory = working_directory();
    if (!input.options.debug_info) {
      relative_record = proto::record_relative_to_program(input.include_record, m_name);
      definitions = definitions_text(defined_by_options(input.options.keyed));
      if (relative_record) {
        if (auto why = output_may_name_program({m_name, m_source, m_headers, definitions, m_expressions},
                                               input.include_record)) {
          relative_record.reset();
          key_note = "; keyed with the program's name, as " + *why;
        }
      }
    }
  }
  auto built = proto::nvrtc_key(input);
  if (!built) return uncached(built.error().message, proto::NvrtcUncachedReason::unknown_option);
  std::optional<proto::NvrtcKey> relative;
  if (relative_record) {
    if (auto keyed = proto::nvrtc_program_relative_key(input, *relative_record)) relative = std::move(*keyed);
  }
  // Looked up first, and the one a result goes under unless it names the program.
  const proto::KeyFields* key = relative ? &relative->fields : &built->fields;
  record.key(proto::to_hex(proto::key_id(*key)), key->arch);

  const auto daemon_failed = [&](const common::Error& error) {
    ++env.counters.daemon_unavailable;
    const std::string why = "jitcached at " + env.settings.socket_path + " cannot be used: " + error.message;
    loader::warn_once(why, env.settings.quiet);
    record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
    record.reason(why);
  };
  // One LOOKUP of `looked_up`: true when the program is now served from the cache.
  bool daemon_down = false;
  const auto serve_from = [&](const proto::KeyFields& looked_up) {
    auto found = [&] {
      auto timer = record.step(&jitcache_load_info::ns_lookup);
      auto connected = env.cache.connect();
      if (!connected) return common::Result<std::optional<transport::FetchedImage>>(connected.error());
      return env.cache.lookup(looked_up, transport::ImageDelivery::bytes);
    }();
    if (!found) {
      if (found.error().reply_status == 0) {
        daemon_down = true;
        m_daemon_down = true;
        daemon_failed(found.error());
        return false;
      }
      record.reason("jitcached refused the LOOKUP (" + found.error().message + ")");
      return false;
    }
    if (!found->has_value() || (*found)->info.key != looked_up) return false;
    auto decoded = proto::decode_nvrtc_result((*found)->bytes());
    // A log stored without its directory gets this program's (nvrtc_program_directory.hpp).
    std::optional<proto::NvrtcResult> in_directory;
    if (decoded) in_directory = proto::result_in_directory(*decoded, m_name);
    bool fits = in_directory && in_directory->lowered_names.size() == m_expressions.size();
    for (std::size_t i = 0; fits && i < m_expressions.size(); ++i) {
      fits = in_directory->lowered_names[i].expression == m_expressions[i];
    }
    if (!fits) {
      ++env.counters.corrupt_replies;
      record.reason("the cached NVRTC result failed the client's check; compiled again");
      return false;
    }
    m_served = std::move(*in_directory);
    record.key(proto::to_hex(proto::key_id(looked_up)), looked_up.arch);
    record.outcome(JITCACHE_OUTCOME_HIT);
    record.reason("NVRTC result " + proto::to_hex((*found)->info.key_id).substr(0, 16) + " from the cache (" +
                  (*found)->info.producer + ")");
    return true;
  };
  // The key relative to the directory, then the key with the name (where a result whose log or
  // output names the program went).
  const auto serve_from_cache = [&] {
    if (relative) {
      if (serve_from(relative->fields)) return true;
      if (daemon_down) return false;
    }
    return serve_from(built->fields);
  };
  if (serve_from_cache()) return static_cast<nvrtcResult>(m_served->compile_result);
  if (daemon_down) return real.compile(m_real, count, options);

  // Single flight on this host (compile_lock.hpp): who waited for another compiler looks again.
  CompileLock lock(proto::to_hex(proto::key_id(*key)), env.settings.compile_timeout);
  if (lock.waited()) {
    if (serve_from_cache()) return static_cast<nvrtcResult>(m_served->compile_result);
    if (daemon_down) return real.compile(m_real, count, options);
  }

  if (auto answered = compile_by_daemon(input, built->fields, count, options, env, record)) return *answered;

  // A miss: NVRTC compiles, and what it answers is stored.
  const auto start = std::chrono::steady_clock::now();
  const nvrtcResult result = [&] {
    auto timer = record.step(&jitcache_load_info::ns_compile);
    return real.compile(m_real, count, options);
  }();
  record.outcome(JITCACHE_OUTCOME_COMPILED_LOCALLY);
  if (result != NVRTC_SUCCESS && result != NVRTC_ERROR_COMPILATION) {
    record.outcome(JITCACHE_OUTCOME_UNCACHED_FALLBACK);
    record.append_reason("; not stored: NVRTC failed for a reason other than the source");
    m_uncached = proto::NvrtcUncachedReason::not_stored;
    return result;
  }
  // The key names the disk as the scan before the compile found it; NVRTC read it again as it
  // compiled. A header that appeared or changed in between (while this process looked up, waited for
  // the lock or compiled) would store this output under the key of a disk without it, for every
  // later program whose disk is as it was: so the disk is scanned again, and the answer is stored
  // only when the record is the same (tests/integration/test_transparent_nvrtc_read_during_compile.cpp).
  auto rescanned = scan_includes({m_name, m_source, m_headers, input.options.include_paths, input.options.pre_includes},
                                 defined_by_options(input.options.keyed));
  if (!rescanned || rescanned->text != input.include_record) {
    record.append_reason("; not stored: a file the compile may read changed while it compiled");
    return result;
  }
  const proto::NvrtcResult answers = answers_of(real, result);
  // What another directory's program may be served under the relative key (nullopt: none).
  const std::optional<proto::NvrtcResult> shared =
      relative ? shared_answers(real, count, options, {m_name, m_source, m_headers, definitions, m_expressions},
                                input.include_record, answers, key_note)
               : std::nullopt;
  const std::vector<std::uint8_t> image = proto::encode_nvrtc_result(shared ? *shared : answers);
  const proto::NvrtcKey& stored_under = shared ? *relative : *built;
  record.key(proto::to_hex(proto::key_id(stored_under.fields)), stored_under.fields.arch);
  auto timer = record.step(&jitcache_load_info::ns_put);
  proto::PutRequest request;
  request.key = stored_under.fields;
  request.producer = "NVRTC " + std::to_string(input.identity.major) + "." + std::to_string(input.identity.minor) +
                     " (nvrtcCompileProgram)";
  request.compile_time_us = micros_since(start);
  request.image = proto::Bytes(image);
  request.content_fast = stored_under.content_fast;
  if (auto stored = env.cache.put(request); stored) {
    ++env.counters.puts;
    record.append_reason("a miss: compiled with NVRTC and stored");
  } else {
    ++env.counters.put_failures;
    record.append_reason("a miss: compiled with NVRTC; storing it failed: " + stored.error().message);
  }
  if (!lock.unavailable().empty()) record.append_reason("; " + lock.unavailable());
  record.append_reason(key_note);
  return result;
}

void NvrtcProgram::note_uncached(const link::LinkEnvironment& env, proto::NvrtcUncachedReason reason) {
  // A daemon found absent during this compile is not asked again (it is in back-off); the note is
  // a figure, so its failure changes nothing for the program.
  if (env.settings.disabled || m_daemon_down) return;
  if (auto connected = env.cache.connect(); !connected) return;
  (void)env.cache.note_nvrtc_uncached(reason);
}

std::optional<proto::NvrtcResult> NvrtcProgram::shared_answers(const NvrtcEntryPoints& real, int count,
                                                               const char* const* options, const ProgramTexts& texts,
                                                               std::string_view include_record,
                                                               const proto::NvrtcResult& answers,
                                                               std::string& key_note) const {
  if (!proto::result_names_program(answers, m_name)) return answers;
  const std::string directory = proto::program_directory(m_name);
  auto cut = proto::result_without_directory(answers, m_name);
  if (!cut || compile_texts_hold(texts, include_record, directory) || options_hold(count, options, directory)) {
    key_note = "; keyed with the program's name, as its log or output names the program's directory";
    return std::nullopt;
  }
  // Texts can spell the name from pieces none holds whole (a #line spliced by a backslash-newline,
  // joined string literals, a stringized macro), and the log then writes it whatever the program
  // is named: only NVRTC tells where it writes the name. The program compiled again under a name
  // in a directory no one made must be answered the cut log with that directory, or, where the
  // log does not name it at all, exactly these answers.
  const std::string witness_name = witness_directory(directory) + m_name.substr(m_name.rfind('/'));
  const std::optional<proto::NvrtcResult> witness = answers_under(real, witness_name, count, options);
  if (witness && witness == proto::result_in_directory(*cut, witness_name)) {
    key_note = "; the log names the program: stored without its directory, put back for each program served";
    return cut;
  }
  if (witness && *witness == answers) {
    key_note = "; the log names the program's directory whatever the program's name";
    return answers;
  }
  key_note = "; keyed with the program's name, as its log names its directory where NVRTC does not name it";
  return std::nullopt;
}

proto::NvrtcResult NvrtcProgram::answers_of(const NvrtcEntryPoints& real, nvrtcResult compiled) const {
  return answers_of(real, m_real, compiled);
}

std::optional<proto::NvrtcResult> NvrtcProgram::answers_under(const NvrtcEntryPoints& real, const std::string& name,
                                                              int count, const char* const* options) const {
  std::vector<const char*> contents;
  std::vector<const char*> names;
  for (const auto& [header_name, content] : m_headers) {
    names.push_back(header_name.c_str());
    contents.push_back(content.c_str());
  }
  nvrtcProgram program = nullptr;
  if (real.create(&program, m_source.c_str(), name.c_str(), static_cast<int>(m_headers.size()), contents.data(),
                  names.data()) != NVRTC_SUCCESS) {
    return std::nullopt;
  }
  std::optional<proto::NvrtcResult> answers;
  bool added = true;
  for (const std::string& expression : m_expressions) {
    added = added && real.add_name_expression(program, expression.c_str()) == NVRTC_SUCCESS;
  }
  if (added) {
    const nvrtcResult compiled = real.compile(program, count, options);
    if (compiled == NVRTC_SUCCESS || compiled == NVRTC_ERROR_COMPILATION) answers = answers_of(real, program, compiled);
  }
  real.destroy(&program);
  return answers;
}

proto::NvrtcResult NvrtcProgram::answers_of(const NvrtcEntryPoints& real, nvrtcProgram program,
                                            nvrtcResult compiled) const {
  proto::NvrtcQuestions ask;
  ask.has_output = [&](std::size_t i) { return real.size_of[i] != nullptr && real.bytes_of[i] != nullptr; };
  ask.size_of = [&](std::size_t i, std::size_t* size) {
    return static_cast<std::uint32_t>(real.size_of[i](program, size));
  };
  ask.bytes_of = [&](std::size_t i, char* out) { return static_cast<std::uint32_t>(real.bytes_of[i](program, out)); };
  ask.lowered_name = [&](const char* expression, const char** lowered) {
    return static_cast<std::uint32_t>(real.get_lowered_name(program, expression, lowered));
  };
  return proto::nvrtc_answers_of(ask, static_cast<std::uint32_t>(compiled), m_expressions);
}

std::optional<nvrtcResult> NvrtcProgram::compile_by_daemon(const proto::NvrtcCompileInput& input,
                                                           const proto::KeyFields& key, int count,
                                                           const char* const* options, const link::LinkEnvironment& env,
                                                           loader::LoadRecord& record) {
  if (g_daemon_nvrtc_differs.load(std::memory_order_relaxed)) return std::nullopt;
  if (proto::nvrtc_daemon_refusal(input.options, input.include_record)) return std::nullopt;
  proto::NvrtcCompileRequest request;
  request.identity = input.identity;
  request.claimed_key = key;
  request.program.name = m_name;
  request.program.source = m_source;
  request.program.headers = m_headers;
  for (int i = 0; i < count; ++i) request.program.options.emplace_back(options[i]);
  request.program.name_expressions = m_expressions;
  request.include_record = input.include_record;
  const auto answer = [&] {
    auto timer = record.step(&jitcache_load_info::ns_compile);
    return env.cache.nvrtc_compile(request, env.settings.compile_timeout);
  }();
  if (!answer) {
    if (answer.error().reply_status == static_cast<std::uint16_t>(proto::Status::cannot_compile) &&
        answer.error().message.starts_with("nvrtc_identity:")) {
      g_daemon_nvrtc_differs.store(true, std::memory_order_relaxed);
    }
    if (answer.error().code != common::ErrorCode::unsupported) {
      record.append_reason("jitcached did not compile it (" + answer.error().message + "); ");
    }
    return std::nullopt;
  }
  auto decoded = proto::decode_nvrtc_result(answer->result);
  bool fits = static_cast<bool>(decoded) && decoded->lowered_names.size() == m_expressions.size();
  for (std::size_t i = 0; fits && i < m_expressions.size(); ++i) {
    fits = decoded->lowered_names[i].expression == m_expressions[i];
  }
  if (!fits) {
    ++env.counters.corrupt_replies;
    record.append_reason("jitcached's NVRTC result failed the client's check; ");
    return std::nullopt;
  }
  m_served = std::move(*decoded);
  const bool stored = answer->origin == proto::NvrtcCompileOrigin::stored;
  record.outcome(stored ? JITCACHE_OUTCOME_HIT : JITCACHE_OUTCOME_COMPILED_BY_DAEMON);
  record.reason(stored ? "NVRTC result from the cache (found by NVRTC_COMPILE)"
                       : "a miss: compiled by jitcached with its NVRTC, the same as this program's, and shared");
  return static_cast<nvrtcResult>(m_served->compile_result);
}

nvrtcResult NvrtcProgram::output_size(const NvrtcEntryPoints& real, proto::NvrtcOutput which, std::size_t* size) {
  std::lock_guard lock(m_mutex);
  const std::size_t index = static_cast<std::size_t>(which);
  if (!m_served) return real.size_of[index](m_real, size);
  const proto::NvrtcOutputAnswer& output = m_served->output(which);
  if (size == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  if (output.size_result == NVRTC_SUCCESS) *size = output.bytes.size();
  return static_cast<nvrtcResult>(output.size_result);
}

nvrtcResult NvrtcProgram::output_bytes(const NvrtcEntryPoints& real, proto::NvrtcOutput which, char* out) {
  std::lock_guard lock(m_mutex);
  const std::size_t index = static_cast<std::size_t>(which);
  if (!m_served) return real.bytes_of[index](m_real, out);
  const proto::NvrtcOutputAnswer& output = m_served->output(which);
  if (out == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  // The bytes call's answer, as NVRTC gave it after a successful size call.
  if (output.size_result != NVRTC_SUCCESS) return static_cast<nvrtcResult>(output.size_result);
  if (output.bytes_result == NVRTC_SUCCESS && !output.bytes.empty()) {
    std::memcpy(out, output.bytes.data(), output.bytes.size());
  }
  return static_cast<nvrtcResult>(output.bytes_result);
}

nvrtcResult NvrtcProgram::lowered_name(const NvrtcEntryPoints& real, const char* expression, const char** lowered) {
  std::lock_guard lock(m_mutex);
  if (!m_served) return real.get_lowered_name(m_real, expression, lowered);
  if (expression == nullptr || lowered == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  for (const proto::NvrtcLoweredName& name : m_served->lowered_names) {
    if (name.expression != expression) continue;
    // The string lives as long as the program, as NVRTC's own does.
    if (name.result == NVRTC_SUCCESS) *lowered = name.lowered.c_str();
    return static_cast<nvrtcResult>(name.result);
  }
  return static_cast<nvrtcResult>(m_served->unknown_name_result);
}

}  // namespace jitcache::client::nvrtc
