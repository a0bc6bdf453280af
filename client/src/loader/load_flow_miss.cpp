// LoadFlow's miss: COMPILE at the daemon when it compiles, else (or when it refuses) the driver's
// own JIT through cuLink* with the caller's options, then PUT (docs/client-guide.md §4 step 5).
// load_flow.hpp has the whole flow.
#include <client/src/loader/load_flow.hpp>

#include <chrono>
#include <vector>

#include <client/src/driver/cu_result_text.hpp>
#include <client/src/driver/load_error_class.hpp>
#include <client/src/loader/load_wording.hpp>
#include <proto/compile_messages.hpp>

namespace jitcache::client::loader {

namespace {

constexpr std::size_t k_private_log_size = 8192;

std::string producer_name(const driver::DriverApi& api) {
  return "driver " + std::to_string(api.api_version) + "/" + api.build + " (cuLink)";
}

}  // namespace

CUresult LoadFlow::load_miss(ImageTarget& target, const void* image, const CallerOptions& options,
                             const key::PtxSource& source, LoadKey& key) {
  auto capabilities = m_cache.capabilities();
  if (!capabilities && capabilities.error().reply_status == 0) {
    return daemon_failed(target, image, options, capabilities.error());
  }
  // A daemon that answers HELLO with an error status is alive but says nothing of compiling.
  if (!capabilities || (*capabilities & proto::k_capability_compile) == 0) {
    return compile_locally(target, image, options, source, key, true, JITCACHE_OUTCOME_COMPILED_LOCALLY);
  }

  const proto::KeyFields& fields = key.complete();
  proto::CompileRequest request;
  request.key_schema = fields.key_schema;
  request.arch = fields.arch;
  request.driver_api = fields.driver_api;
  request.driver_build = fields.driver_build;
  request.options = fields.options;
  request.priority = proto::CompilePriority::interactive;
  request.ptx = proto::as_bytes(source.text());
  const auto wait = m_settings.compile_timeout;
  auto answer = [&] {
    auto timer = m_record.step(&jitcache_load_info::ns_compile);
    return m_cache.compile(request, wait);
  }();
  using Kind = transport::CompileAnswer::Kind;
  if (!answer) {
    const common::Error& error = answer.error();
    if (error.code == common::ErrorCode::timeout) {
      // A compile that outlasts the wait is not a dead daemon: it finishes and stores the image for
      // the next load. This load JITs here, and stores nothing (the daemon will).
      m_record.reason("jitcached did not finish compiling within " + std::to_string(wait.count()) +
                      " ms (compile_timeout)");
      return compile_locally(target, image, options, source, key, false, JITCACHE_OUTCOME_COMPILED_LOCALLY);
    }
    if (error.reply_status == 0) return daemon_failed(target, image, options, error);
    m_record.reason("jitcached refused COMPILE (" + error.message + ")");
    return compile_locally(target, image, options, source, key, true, JITCACHE_OUTCOME_COMPILED_LOCALLY);
  }
  switch (answer->kind) {
    case Kind::compiled: {
      const jitcache_load_outcome success =
          answer->from_store ? JITCACHE_OUTCOME_HIT : JITCACHE_OUTCOME_COMPILED_BY_DAEMON;
      if (auto result = load_hit(target, options, *answer->image, fields, success)) return *result;
      return compile_locally(target, image, options, source, key, true, JITCACHE_OUTCOME_REBUILT_AFTER_FAILED_LOAD);
    }
    case Kind::compile_error:
      // The driver compiles the same PTX with the caller's options: the caller gets the driver's own
      // error and log (or, should the driver's JIT accept what nvJitLink did not, its module).
      return driver_load(target, image, options, JITCACHE_OUTCOME_UNCACHED_FALLBACK,
                         "jitcached could not compile the PTX (compile_error: " + excerpt(answer->message) +
                             "); loaded with the driver's own JIT");
    case Kind::cannot_compile:
    case Kind::busy:
    case Kind::worker_failed:
      m_record.reason("jitcached did not compile it (" + std::string(transport::compile_answer_name(answer->kind)) +
                      ": " + excerpt(answer->message) + ")");
      return compile_locally(target, image, options, source, key, true, JITCACHE_OUTCOME_COMPILED_LOCALLY);
  }
  return compile_locally(target, image, options, source, key, true, JITCACHE_OUTCOME_COMPILED_LOCALLY);
}

CUresult LoadFlow::compile_locally(ImageTarget& target, const void* image, const CallerOptions& options,
                                   const key::PtxSource& source, LoadKey& key, bool store,
                                   jitcache_load_outcome success_outcome) {
  const std::string previous = std::string(m_record.reason());
  auto fallback = [&](std::string why) {
    if (!previous.empty()) why = previous + "; " + why;
    return driver_load(target, image, options, JITCACHE_OUTCOME_UNCACHED_FALLBACK, why);
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
    CUresult result =
        m_api.link_create(link_options.count(), link_options.options_data(), link_options.values_data(), &state);
    if (result != CUDA_SUCCESS) {
      return fallback("cuLinkCreate returned " + driver::describe_result(result) + "; " + compiler_log());
    }
    std::string name = "jitcache:" + key.built.fields().arch;
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
      return fallback("the local JIT (cuLink) returned " + driver::describe_result(result) +
                      (log.empty() ? "" : ": " + log));
    }
    compile_time_us = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count());
  }

  CUresult result = CUDA_SUCCESS;
  {
    auto timer = m_record.step(&jitcache_load_info::ns_load);
    result = target.load_cubin(cubin.data(), cubin.size());
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
    m_record.reason(std::string("a miss: ") + (previous.empty() ? "" : previous + "; ") +
                    "compiled with the driver's JIT" + (store ? " and stored" : ""));
  }
  if (store) put(key, cubin, compile_time_us);
  return CUDA_SUCCESS;
}

void LoadFlow::put(LoadKey& key, const std::vector<std::uint8_t>& cubin, std::uint64_t compile_time_us) {
  const proto::KeyFields& fields = key.complete();
  auto timer = m_record.step(&jitcache_load_info::ns_put);
  proto::PutRequest request;
  request.key = fields;
  request.producer = producer_name(m_api);
  request.compile_time_us = compile_time_us;
  request.image = proto::Bytes(cubin);
  // The entry's fast key, so the next load finds it in one LOOKUP; only a daemon that knows the
  // field accepts it (known by now: the miss or the failed hit asked for the capabilities).
  if (auto capabilities = m_cache.capabilities(); capabilities && (*capabilities & proto::k_capability_fast_key)) {
    request.content_fast = key.built.content_fast();
  }
  auto stored = m_cache.put(request);
  if (stored) {
    ++m_counters.puts;
    return;
  }
  ++m_counters.put_failures;
  m_record.append_reason("; storing it failed: " + stored.error().message);
}

}  // namespace jitcache::client::loader
