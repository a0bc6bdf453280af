#include <daemon/compile_worker/nvjitlink_compile.hpp>

#include <dlfcn.h>
#include <nvJitLink.h>
#include <sys/stat.h>

#include <chrono>
#include <string>
#include <vector>

#include <proto/linker_identity.hpp>

namespace jitcache::daemon::compile_worker {

namespace {

using compile::ReplyStatus;
using compile::WorkerReply;

std::string result_name(nvJitLinkResult result) {
  // nvJitLink.h 13.0; the number is kept too, for codes a newer library adds.
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
  return name + " (" + std::to_string(index) + ")";
}

std::string error_log(nvJitLinkHandle handle) {
  std::size_t size = 0;
  if (nvJitLinkGetErrorLogSize(handle, &size) != NVJITLINK_SUCCESS || size == 0) return {};
  std::string log(size, '\0');
  if (nvJitLinkGetErrorLog(handle, log.data()) != NVJITLINK_SUCCESS) return {};
  log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
  return log;
}

void set_text(WorkerReply& reply, const std::string& text) { reply.payload.assign(text.begin(), text.end()); }

// Fills reply as a compile error of `call`; the log leads, as the compiler wrote it.
void fail(WorkerReply& reply, nvJitLinkHandle handle, const char* call, nvJitLinkResult result) {
  reply.status = ReplyStatus::compile_error;
  reply.nvjitlink_result = static_cast<std::uint32_t>(result);
  std::string log = handle != nullptr ? error_log(handle) : std::string();
  if (!log.empty() && log.back() != '\n') log.push_back('\n');
  set_text(reply, log + call + " failed: " + result_name(result));
}

class Handle {
 public:
  ~Handle() {
    if (m_handle != nullptr) nvJitLinkDestroy(&m_handle);
  }
  nvJitLinkHandle* out() { return &m_handle; }
  nvJitLinkHandle get() const { return m_handle; }

 private:
  nvJitLinkHandle m_handle = nullptr;
};

nvJitLinkInputType input_type(proto::LinkInputKind kind) {
  switch (kind) {
    case proto::LinkInputKind::ptx: return NVJITLINK_INPUT_PTX;
    case proto::LinkInputKind::cubin: return NVJITLINK_INPUT_CUBIN;
    case proto::LinkInputKind::fatbinary: return NVJITLINK_INPUT_FATBIN;
    case proto::LinkInputKind::object: return NVJITLINK_INPUT_OBJECT;
    case proto::LinkInputKind::library: return NVJITLINK_INPUT_LIBRARY;
    case proto::LinkInputKind::ltoir: return NVJITLINK_INPUT_LTOIR;
  }
  return NVJITLINK_INPUT_NONE;
}

// The inputs of the job into the handle, in order: a module's one PTX, or a link's inputs.
nvJitLinkResult add_inputs(const compile::CompileJob& job, nvJitLinkHandle handle) {
  // Rationale: the driver requires NUL-terminated PTX; each copy guarantees one past the end without
  // changing the size nvJitLink is told, so the bytes compiled are exactly the key's.
  const auto add = [&](nvJitLinkInputType type, const std::vector<std::uint8_t>& data, const std::string& name) {
    std::vector<std::uint8_t> copy(data);
    copy.push_back(0);
    return nvJitLinkAddData(handle, type, copy.data(), data.size(), name.c_str());
  };
  if (job.link_inputs.empty()) return add(NVJITLINK_INPUT_PTX, job.ptx, "input.ptx");
  for (std::size_t i = 0; i < job.link_inputs.size(); ++i) {
    const nvJitLinkResult result =
        add(input_type(job.link_inputs[i].kind), job.link_inputs[i].data, "input" + std::to_string(i));
    if (result != NVJITLINK_SUCCESS) return result;
  }
  return NVJITLINK_SUCCESS;
}

void link(const compile::CompileJob& job, WorkerReply& reply) {
  std::vector<std::string> options{"-arch=" + job.arch};
  options.insert(options.end(), job.nvjitlink_options.begin(), job.nvjitlink_options.end());
  std::vector<const char*> pointers;
  for (const std::string& option : options) pointers.push_back(option.c_str());

  Handle handle;
  nvJitLinkResult result = nvJitLinkCreate(handle.out(), static_cast<std::uint32_t>(pointers.size()), pointers.data());
  if (result == NVJITLINK_ERROR_UNRECOGNIZED_ARCH || result == NVJITLINK_ERROR_UNSUPPORTED_ARCH) {
    reply.status = ReplyStatus::refused;
    reply.nvjitlink_result = static_cast<std::uint32_t>(result);
    set_text(reply, "nvJitLink cannot target " + job.arch + " (nvJitLinkCreate: " + result_name(result) + ")");
    return;
  }
  if (result != NVJITLINK_SUCCESS) return fail(reply, nullptr, "nvJitLinkCreate", result);

  result = add_inputs(job, handle.get());
  if (result != NVJITLINK_SUCCESS) return fail(reply, handle.get(), "nvJitLinkAddData", result);
  result = nvJitLinkComplete(handle.get());
  if (result != NVJITLINK_SUCCESS) return fail(reply, handle.get(), "nvJitLinkComplete", result);
  std::size_t size = 0;
  result = nvJitLinkGetLinkedCubinSize(handle.get(), &size);
  if (result != NVJITLINK_SUCCESS) return fail(reply, handle.get(), "nvJitLinkGetLinkedCubinSize", result);
  std::vector<std::uint8_t> cubin(size);
  result = nvJitLinkGetLinkedCubin(handle.get(), cubin.data());
  if (result != NVJITLINK_SUCCESS) return fail(reply, handle.get(), "nvJitLinkGetLinkedCubin", result);
  reply.status = ReplyStatus::compiled;
  reply.nvjitlink_result = 0;
  reply.payload = std::move(cubin);
}

}  // namespace

WorkerReply compile_with_nvjitlink(const compile::CompileJob& job) {
  WorkerReply reply;
  nvJitLinkVersion(&reply.nvjitlink_major, &reply.nvjitlink_minor);
  const auto start = std::chrono::steady_clock::now();
  link(job, reply);
  reply.compile_time_us = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count());
  return reply;
}

std::string nvjitlink_identity_text() {
  unsigned major = 0;
  unsigned minor = 0;
  if (nvJitLinkVersion(&major, &minor) != NVJITLINK_SUCCESS) return {};
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&nvJitLinkVersion), &info) == 0 || info.dli_fname == nullptr) return {};
  struct stat st {};
  if (::stat(info.dli_fname, &st) != 0) return {};
  const proto::DriverId id = proto::nvjitlink_driver_id(major, minor, static_cast<std::uint64_t>(st.st_size));
  return std::to_string(id.api) + " " + id.build;
}

std::string nvjitlink_version_text() {
  unsigned major = 0;
  unsigned minor = 0;
  if (nvJitLinkVersion(&major, &minor) != NVJITLINK_SUCCESS) return {};
  return "nvJitLink " + std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace jitcache::daemon::compile_worker
