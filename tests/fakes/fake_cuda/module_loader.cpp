#include <tests/fakes/fake_cuda/module_loader.hpp>

#include <tests/fakes/fake_cuda/caller_images.hpp>
#include <tests/fakes/fake_cuda/caller_memory.hpp>
#include <tests/fakes/fake_cuda/cubin_elf.hpp>
#include <tests/fakes/fake_cuda/device_model.hpp>
#include <tests/fakes/fake_cuda/fake_driver.hpp>
#include <tests/fakes/fake_cuda/jit_options.hpp>
#include <tests/fakes/fake_cuda/ptx_jit.hpp>

#include <client/src/fatbin/fatbin_reader.hpp>
#include <client/src/fatbin/select_image.hpp>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace jitcache::fakes::fake_cuda {
namespace {

// Rationale: the same cap the client's walker uses for PTX text (1 GiB); no real module comes close.
constexpr std::size_t k_max_ptx_length = std::size_t{1} << 30;

enum class CubinOrigin { caller, jit };

// One load: the driver, the settings it started with, the caller's options, and what goes back into
// the caller's log slots when it ends.
struct Load {
  FakeDriver& driver;
  Settings settings;
  JitRequest request;
  std::string error_log;  // for CU_JIT_ERROR_LOG_BUFFER: compiler messages only
  std::string info_log;

  fb::Arch jit_target() const { return request.target.value_or(context_jit_target(settings.cc)); }

  CUresult fail(CUresult code, const std::string& reason) {
    driver.counters.set_last_error_log(reason);
    return code;
  }
};

std::string cc_text(unsigned cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

CUresult refuse_cubin(Load& load, CUresult code, const std::string& reason, CubinOrigin origin) {
  if (origin == CubinOrigin::caller) load.driver.counters.cubin_loads_failed.fetch_add(1);
  if (code == CUDA_ERROR_INVALID_IMAGE && load.settings.crash_on_truncated) {
    // Models docs/driver-facts.md §0.1: a truncated cubin can crash the real driver. A test that sets this proves
    // the client never hands damaged bytes to the driver.
    warn("FAKE_CUDA_CRASH_ON_TRUNCATED: aborting on a malformed cubin: " + reason);
    std::abort();
  }
  return load.fail(code, reason);
}

CUresult load_cubin_bytes(Load& load, std::vector<std::byte> cubin, CubinOrigin origin, CUmodule* out) {
  const auto info = inspect_cubin(cubin);
  if (!info) return refuse_cubin(load, CUDA_ERROR_INVALID_IMAGE, info.error().message, origin);
  if (!cubin_runs_on_device(info->arch, load.settings.cc)) {
    return refuse_cubin(load, CUDA_ERROR_NO_BINARY_FOR_GPU,
                        "cubin for " + fb::arch_name(info->arch) + " cannot run on a device of CC " +
                            cc_text(load.settings.cc),
                        origin);
  }
  if (origin == CubinOrigin::caller) load.driver.counters.cubin_loads_ok.fetch_add(1);
  *out = load.driver.modules.add(make_module(std::move(cubin), info->kernels, info->unresolved_functions));
  return CUDA_SUCCESS;
}

// ptxas options stored beside a fat binary's PTX entry ("-O2  -maxrregcount=32 ") as nvJitLink options.
std::vector<std::string> embedded_ptxas_options(const std::string& text) {
  std::vector<std::string> options;
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    if (word.front() != '-' && !options.empty()) {
      options.back() += "=" + word;  // "-maxrregcount 32" written as two words
    } else {
      options.push_back("-Xptxas=" + word);
    }
  }
  return options;
}

CUresult load_ptx(Load& load, std::string_view text, const std::vector<std::string>& embedded_options, CUmodule* out) {
  const auto header = read_ptx_header(text);
  if (!header)
    return load.fail(CUDA_ERROR_INVALID_IMAGE,
                     "the image is neither a cubin, a fat binary nor PTX (no .version directive)");
  const fb::Arch target = load.jit_target();
  auto failure = check_ptx_version(*header, max_ptx_isa(load.settings.driver_version));
  if (!failure) failure = check_ptx_target(*header, target);
  if (failure) {
    load.error_log = failure->log;
    return load.fail(failure->code, failure->log);
  }
  std::vector<std::string> options = embedded_options;
  options.insert(options.end(), load.request.compiler_options.begin(), load.request.compiler_options.end());
  load.driver.counters.ptx_jit_compiles.fetch_add(1);
  CompileOutcome outcome = compile_ptx(text, target, options);
  load.info_log = outcome.info_log;
  if (outcome.code != CUDA_SUCCESS) {
    load.driver.counters.ptx_jit_failures.fetch_add(1);
    load.error_log = outcome.error_log;
    return load.fail(outcome.code, outcome.error_log);
  }
  return load_cubin_bytes(load, std::move(outcome.cubin), CubinOrigin::jit, out);
}

// A PTX entry that would suit the device but for its ISA: the driver tries to JIT it and fails with
// 222 rather than reporting that nothing fits [I].
bool has_too_new_ptx(const std::vector<fb::Entry>& entries, const fb::DeviceTarget& device, const fb::PtxIsa& max_isa) {
  for (const fb::Entry& entry : entries) {
    if (entry.kind == fb::EntryKind::ptx && fb::ptx_targets(entry.arch, device) &&
        std::tie(entry.version_major, entry.version_minor) > std::tie(max_isa.major, max_isa.minor)) {
      return true;
    }
  }
  return false;
}

CUresult load_fatbin(Load& load, const void* image, CallerImageKind kind, CUmodule* out) {
  auto bytes = copy_fatbin_from_caller(image, kind);
  if (!bytes) return load.fail(CUDA_ERROR_INVALID_IMAGE, "fat binary: " + bytes.error().message);
  const auto fat = fb::read_fatbin(*bytes);
  if (!fat) return load.fail(CUDA_ERROR_INVALID_IMAGE, "fat binary: " + fat.error().message);
  const fb::DeviceTarget device = device_target(load.settings.cc);
  const fb::PtxIsa max_isa = max_ptx_isa(load.settings.driver_version);
  const auto selection = fb::select_image(fat->entries, device, max_isa);
  if (!selection) {
    const bool too_new = has_too_new_ptx(fat->entries, device, max_isa);
    return load.fail(too_new ? CUDA_ERROR_UNSUPPORTED_PTX_VERSION : CUDA_ERROR_NO_BINARY_FOR_GPU,
                     selection.error().message);
  }
  const fb::Entry& entry = fat->entries[selection->entry_index];
  if (selection->action == fb::Action::load_cubin) {
    return load_cubin_bytes(load, std::vector<std::byte>(entry.bytes.begin(), entry.bytes.end()), CubinOrigin::caller,
                            out);
  }
  return load_ptx(load, entry.ptx_text(), embedded_ptxas_options(entry.ptxas_options), out);
}

CUresult dispatch(Load& load, const void* image, CUmodule* out) {
  const CallerImageKind kind = classify_caller_image(image);
  switch (kind) {
    case CallerImageKind::unreadable:
      return load.fail(CUDA_ERROR_INVALID_IMAGE, "the image pointer does not point at readable memory");
    case CallerImageKind::cubin: {
      if (auto code = load.driver.injected_failure(FaultPoint::load_cubin)) return *code;
      auto bytes = copy_cubin_from_caller(image);
      if (!bytes) return refuse_cubin(load, CUDA_ERROR_INVALID_IMAGE, bytes.error().message, CubinOrigin::caller);
      return load_cubin_bytes(load, std::move(*bytes), CubinOrigin::caller, out);
    }
    case CallerImageKind::fatbin_container:
    case CallerImageKind::fatbin_wrapper:
      load.driver.counters.fatbin_loads.fetch_add(1);
      if (auto code = load.driver.injected_failure(FaultPoint::load_fatbin)) return *code;
      return load_fatbin(load, image, kind, out);
    case CallerImageKind::text: {
      if (auto code = load.driver.injected_failure(FaultPoint::load_ptx)) return *code;
      const auto text = caller_string(image, k_max_ptx_length);
      if (!text) return load.fail(CUDA_ERROR_INVALID_IMAGE, "the PTX text has no terminating NUL in readable memory");
      return load_ptx(load, *text, {}, out);
    }
  }
  return CUDA_ERROR_INVALID_IMAGE;
}

}  // namespace

CUresult load_module(CUmodule* module, const void* image, unsigned option_count, CUjit_option* options,
                     void** option_values) {
  FakeDriver& driver = FakeDriver::instance();
  driver.counters.module_load_calls.fetch_add(1);
  if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Load load{driver, driver.settings.get(), {}, {}, {}};
  if (const CUresult parsed = parse_jit_options(option_count, options, option_values, load.request);
      parsed != CUDA_SUCCESS) {
    return parsed;
  }
  const auto start = std::chrono::steady_clock::now();
  const CUresult result = dispatch(load, image, module);
  write_wall_time(load.request.wall_time_slot,
                  std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - start).count());
  write_log(load.request.error_log, load.error_log);
  write_log(load.request.info_log, load.info_log);
  return result;
}

}  // namespace jitcache::fakes::fake_cuda
