#include <tests/fakes/fake_cuda/image_loader.hpp>

#include <tests/fakes/fake_cuda/caller_images.hpp>
#include <tests/fakes/fake_cuda/caller_memory.hpp>
#include <tests/fakes/fake_cuda/cubin_elf.hpp>
#include <tests/fakes/fake_cuda/device_model.hpp>
#include <tests/fakes/fake_cuda/fake_driver.hpp>
#include <tests/fakes/fake_cuda/ptx_jit.hpp>

#include <client/src/fatbin/fatbin_reader.hpp>
#include <client/src/fatbin/select_image.hpp>

#include <client/src/fatbin/fatbin_format.hpp>

#include <chrono>
#include <cstdlib>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace jitcache::fakes::fake_cuda {
namespace {

// Rationale: the same cap the client's walker uses for PTX text (1 GiB); no real module comes close.
constexpr std::size_t k_max_ptx_length = std::size_t{1} << 30;

enum class CubinOrigin { caller, jit };

// One load: the driver, the settings it started with, the caller's options, what goes back into the
// caller's log slots when it ends, and what it produced.
struct Load {
  FakeDriver& driver;
  Settings settings;
  const JitRequest& request;
  const ImageSource& source;
  std::string error_log;  // for CU_JIT_ERROR_LOG_BUFFER: compiler messages only
  std::string info_log;
  ImageLoad out;

  fb::Arch jit_target() const { return request.target.value_or(context_jit_target(settings.cc())); }

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

// The image as read from the caller; a file was recorded whole before the load began.
void record(Load& load, fake_cuda_image_kind kind, bool wrapper, std::span<const std::byte> bytes) {
  if (!load.source.file) load.driver.images.record(load.source.entry_point, kind, wrapper, bytes);
}

void record_incomplete(Load& load, fake_cuda_image_kind kind, bool wrapper) {
  if (!load.source.file) load.driver.images.record_incomplete(load.source.entry_point, kind, wrapper);
}

void watch(Load& load, const void* address, std::size_t size) {
  if (!load.source.file) load.out.regions.push_back(CallerRegion{address, size});
}

CUresult load_cubin_bytes(Load& load, std::vector<std::byte> cubin, CubinOrigin origin) {
  const auto info = inspect_cubin(cubin);
  if (!info) return refuse_cubin(load, CUDA_ERROR_INVALID_IMAGE, info.error().message, origin);
  if (!cubin_runs_on_device(info->arch, load.settings.cc())) {
    return refuse_cubin(load, CUDA_ERROR_NO_BINARY_FOR_GPU,
                        "cubin for " + fb::arch_name(info->arch) + " cannot run on a device of CC " +
                            cc_text(load.settings.cc()),
                        origin);
  }
  if (origin == CubinOrigin::caller) load.driver.counters.cubin_loads_ok.fetch_add(1);
  load.out.module = make_module(std::move(cubin), info->kernels, info->unresolved_functions);
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

CUresult load_ptx(Load& load, std::string_view text, const std::vector<std::string>& embedded_options) {
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
  return load_cubin_bytes(load, std::move(outcome.cubin), CubinOrigin::jit);
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

CUresult load_fatbin(Load& load, const void* image, CallerImageKind kind) {
  const bool wrapper = kind == CallerImageKind::fatbin_wrapper;
  auto copied = copy_fatbin_from_caller(image, kind);
  if (!copied) {
    record_incomplete(load, FAKE_CUDA_IMAGE_FATBIN, wrapper);
    return load.fail(CUDA_ERROR_INVALID_IMAGE, "fat binary: " + copied.error().message);
  }
  record(load, FAKE_CUDA_IMAGE_FATBIN, wrapper, copied->container);
  if (wrapper) watch(load, image, fb::k_wrapper_size);
  watch(load, copied->container_address, copied->container.size());
  const auto fat = fb::read_fatbin(copied->container);
  if (!fat) return load.fail(CUDA_ERROR_INVALID_IMAGE, "fat binary: " + fat.error().message);
  const fb::DeviceTarget device = device_target(load.settings.cc());
  const fb::PtxIsa max_isa = max_ptx_isa(load.settings.driver_version);
  const auto selection = fb::select_image(fat->entries, device, max_isa);
  if (!selection) {
    const bool too_new = has_too_new_ptx(fat->entries, device, max_isa);
    return load.fail(too_new ? CUDA_ERROR_UNSUPPORTED_PTX_VERSION : CUDA_ERROR_NO_BINARY_FOR_GPU,
                     selection.error().message);
  }
  const fb::Entry& entry = fat->entries[selection->entry_index];
  if (selection->action == fb::Action::load_cubin) {
    return load_cubin_bytes(load, std::vector<std::byte>(entry.bytes.begin(), entry.bytes.end()), CubinOrigin::caller);
  }
  return load_ptx(load, entry.ptx_text(), embedded_ptxas_options(entry.ptxas_options));
}

fake_cuda_image_kind recorded_kind(CallerImageKind kind) {
  switch (kind) {
    case CallerImageKind::cubin: return FAKE_CUDA_IMAGE_CUBIN;
    case CallerImageKind::fatbin_container:
    case CallerImageKind::fatbin_wrapper: return FAKE_CUDA_IMAGE_FATBIN;
    case CallerImageKind::text: return FAKE_CUDA_IMAGE_PTX;
    case CallerImageKind::unreadable: break;
  }
  return FAKE_CUDA_IMAGE_NONE;
}

CUresult dispatch(Load& load, const void* image) {
  const CallerImageKind kind = classify_caller_image(image);
  if (load.source.file) {
    load.driver.images.record(load.source.entry_point, recorded_kind(kind), false, *load.source.file);
  }
  switch (kind) {
    case CallerImageKind::unreadable:
      record_incomplete(load, FAKE_CUDA_IMAGE_NONE, false);
      return load.fail(CUDA_ERROR_INVALID_IMAGE, "the image pointer does not point at readable memory");
    case CallerImageKind::cubin: {
      if (auto code = load.driver.injected_failure(FaultPoint::load_cubin)) return *code;
      auto bytes = copy_cubin_from_caller(image);
      if (!bytes) {
        record_incomplete(load, FAKE_CUDA_IMAGE_CUBIN, false);
        return refuse_cubin(load, CUDA_ERROR_INVALID_IMAGE, bytes.error().message, CubinOrigin::caller);
      }
      record(load, FAKE_CUDA_IMAGE_CUBIN, false, *bytes);
      watch(load, image, bytes->size());
      return load_cubin_bytes(load, std::move(*bytes), CubinOrigin::caller);
    }
    case CallerImageKind::fatbin_container:
    case CallerImageKind::fatbin_wrapper:
      load.driver.counters.fatbin_loads.fetch_add(1);
      if (auto code = load.driver.injected_failure(FaultPoint::load_fatbin)) return *code;
      return load_fatbin(load, image, kind);
    case CallerImageKind::text: {
      if (auto code = load.driver.injected_failure(FaultPoint::load_ptx)) return *code;
      const auto text = caller_string(image, k_max_ptx_length);
      if (!text) {
        record_incomplete(load, FAKE_CUDA_IMAGE_PTX, false);
        return load.fail(CUDA_ERROR_INVALID_IMAGE, "the PTX text has no terminating NUL in readable memory");
      }
      record(load, FAKE_CUDA_IMAGE_PTX, false, std::as_bytes(std::span(text->data(), text->size())));
      watch(load, image, text->size() + 1);
      return load_ptx(load, *text, {});
    }
  }
  return CUDA_ERROR_INVALID_IMAGE;
}

}  // namespace

ImageLoad load_image(const ImageSource& source, const JitRequest& request) {
  FakeDriver& driver = FakeDriver::instance();
  Load load{driver, driver.settings.get(), request, source, {}, {}, {}};
  const auto start = std::chrono::steady_clock::now();
  load.out.result = dispatch(load, source.image);
  if (load.out.result != CUDA_SUCCESS) load.out.module.reset();
  write_wall_time(request.wall_time_slot,
                  std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - start).count());
  write_log(request.error_log, load.error_log);
  write_log(request.info_log, load.info_log);
  return std::move(load.out);
}

}  // namespace jitcache::fakes::fake_cuda
