#include <daemon/compile_worker/nvrtc_compile.hpp>

#include <dlfcn.h>

#include <chrono>
#include <string>
#include <vector>

#include <daemon/compile_worker/no_file_access.hpp>
#include <proto/nvrtc_answers.hpp>
#include <proto/nvrtc_compile_messages.hpp>
#include <proto/nvrtc_library_identity.hpp>

namespace jitcache::daemon::compile_worker {

namespace {

// nvrtc.h's calls, by their ABI (nvrtcResult is an int-sized enum, nvrtcProgram a pointer); the
// worker includes no NVRTC header and links no NVRTC.
using Program = void*;
using CreateCall = int (*)(Program*, const char*, const char*, int, const char* const*, const char* const*);
using AddNameCall = int (*)(Program, const char*);
using CompileCall = int (*)(Program, int, const char* const*);
using LoweredCall = int (*)(Program, const char*, const char**);
using SizeCall = int (*)(Program, std::size_t*);
using BytesCall = int (*)(Program, char*);

constexpr int k_success = 0;
constexpr int k_error_compilation = 6;  // NVRTC_ERROR_COMPILATION

// The outputs in proto::NvrtcOutput's order.
constexpr const char* k_size_calls[] = {"nvrtcGetProgramLogSize", "nvrtcGetPTXSize", "nvrtcGetCUBINSize",
                                        "nvrtcGetLTOIRSize", "nvrtcGetOptiXIRSize"};
constexpr const char* k_bytes_calls[] = {"nvrtcGetProgramLog", "nvrtcGetPTX", "nvrtcGetCUBIN", "nvrtcGetLTOIR",
                                         "nvrtcGetOptiXIR"};

compile::WorkerReply refused(std::string why) {
  compile::WorkerReply reply;
  reply.status = compile::ReplyStatus::refused;
  reply.payload.assign(why.begin(), why.end());
  return reply;
}

template <class Call>
Call symbol(void* handle, const char* name) {
  return reinterpret_cast<Call>(::dlsym(handle, name));
}

}  // namespace

compile::WorkerReply compile_with_nvrtc(const compile::NvrtcJob& job) {
  void* handle = ::dlopen(job.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return refused("the configured NVRTC " + job.library + " cannot be loaded");
  auto* version = symbol<int (*)(int*, int*)>(handle, "nvrtcVersion");
  auto* compile_call = symbol<CompileCall>(handle, "nvrtcCompileProgram");
  auto* create = symbol<CreateCall>(handle, "nvrtcCreateProgram");
  auto* add_name = symbol<AddNameCall>(handle, "nvrtcAddNameExpression");
  auto* lowered = symbol<LoweredCall>(handle, "nvrtcGetLoweredName");
  if (version == nullptr || compile_call == nullptr || create == nullptr || add_name == nullptr || lowered == nullptr) {
    return refused("the configured NVRTC " + job.library + " lacks a function a program's compile calls");
  }
  // Rationale: the daemon keys what this compiles with the identity of its probe; a library
  // replaced since (a package upgrade) would file another NVRTC's output under it.
  auto identity =
      proto::nvrtc_library_identity(reinterpret_cast<const void*>(compile_call), version, proto::mapped_file_xxh3);
  if (!identity) return refused(identity.error().message);
  if (!(*identity == job.identity)) {
    return refused("the configured NVRTC " + job.library + " changed since the daemon probed it");
  }
  // NVRTC opens its builtins library by this path at its first compile; loaded now, under the same
  // name, the loader finds it loaded and opens nothing once the filter is in place.
  const std::string library = job.library;
  const std::size_t slash = library.rfind('/');
  const std::string base = library.substr(slash + 1);
  const std::size_t so = base.find(".so");
  const std::string variant =
      base.starts_with("libnvrtc") && so != std::string::npos && so >= 8 ? base.substr(8, so - 8) : std::string();
  const std::string builtins = library.substr(0, slash) + "/libnvrtc-builtins" + variant + ".so." +
                               std::to_string(identity->major) + "." + std::to_string(identity->minor);
  if (::dlopen(builtins.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    return refused("NVRTC's builtins library " + builtins + " cannot be loaded");
  }
  SizeCall size_of[5] = {};
  BytesCall bytes_of[5] = {};
  for (std::size_t i = 0; i < 5; ++i) {
    size_of[i] = symbol<SizeCall>(handle, k_size_calls[i]);
    bytes_of[i] = symbol<BytesCall>(handle, k_bytes_calls[i]);
  }
  if (auto forbidden = forbid_file_access(); !forbidden) return refused(forbidden.error().message);

  const proto::NvrtcProgramText& text = job.program;
  std::vector<const char*> header_contents;
  std::vector<const char*> header_names;
  for (const auto& [name, content] : text.headers) {
    header_names.push_back(name.c_str());
    header_contents.push_back(content.c_str());
  }
  Program program = nullptr;
  if (const int created = create(&program, text.source.c_str(), text.name.c_str(),
                                 static_cast<int>(text.headers.size()), header_contents.data(), header_names.data());
      created != k_success) {
    return refused("nvrtcCreateProgram returned " + std::to_string(created));
  }
  for (const std::string& expression : text.name_expressions) {
    if (const int added = add_name(program, expression.c_str()); added != k_success) {
      return refused("nvrtcAddNameExpression returned " + std::to_string(added));
    }
  }
  std::vector<const char*> options;
  for (const std::string& option : text.options) options.push_back(option.c_str());
  const auto start = std::chrono::steady_clock::now();
  const int compiled = compile_call(program, static_cast<int>(options.size()), options.data());
  const auto elapsed = std::chrono::steady_clock::now() - start;
  if (compiled != k_success && compiled != k_error_compilation) {
    return refused("nvrtcCompileProgram returned " + std::to_string(compiled) + ", not the source's answer");
  }
  proto::NvrtcQuestions ask;
  ask.has_output = [&](std::size_t i) { return size_of[i] != nullptr && bytes_of[i] != nullptr; };
  ask.size_of = [&](std::size_t i, std::size_t* size) { return static_cast<std::uint32_t>(size_of[i](program, size)); };
  ask.bytes_of = [&](std::size_t i, char* out) { return static_cast<std::uint32_t>(bytes_of[i](program, out)); };
  ask.lowered_name = [&](const char* expression, const char** name) {
    return static_cast<std::uint32_t>(lowered(program, expression, name));
  };
  compile::WorkerReply reply;
  reply.status = compile::ReplyStatus::compiled;
  reply.nvjitlink_major = static_cast<unsigned>(identity->major);
  reply.nvjitlink_minor = static_cast<unsigned>(identity->minor);
  reply.compile_time_us =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count());
  reply.payload = proto::encode_nvrtc_result(
      proto::nvrtc_answers_of(ask, static_cast<std::uint32_t>(compiled), text.name_expressions));
  return reply;
}

}  // namespace jitcache::daemon::compile_worker
