#include <client/src/nvrtc/nvrtc_calls.hpp>

#include <pthread.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <client/src/link/link_runtime.hpp>
#include <client/src/link/session_registry.hpp>
#include <client/src/nvrtc/nvrtc_program.hpp>

namespace jitcache::client::nvrtc {

namespace {

using Registry = link::SessionRegistry<nvrtcProgram, NvrtcProgram>;

// Never destroyed: a compile on another thread may outlive static destruction at exit.
Registry& programs() {
  static Registry* registry = [] {
    auto* made = new Registry();
    ::pthread_atfork([] { programs().lock_for_fork(); }, [] { programs().unlock_after_fork(); },
                     [] { programs().unlock_after_fork(); });
    return made;
  }();
  return *registry;
}

std::shared_ptr<NvrtcProgram> find(nvrtcProgram program) {
  try {
    return programs().find(program);
  } catch (...) {
    return nullptr;
  }
}

// A program is answered by the cache only when every call it can make has its real function.
bool complete_set(const NvrtcEntryPoints& real) {
  return real.destroy != nullptr && real.add_name_expression != nullptr && real.compile != nullptr &&
         real.get_lowered_name != nullptr && real.version != nullptr && real.size_of[0] != nullptr &&
         real.bytes_of[0] != nullptr && real.size_of[1] != nullptr && real.bytes_of[1] != nullptr;
}

}  // namespace

nvrtcResult nvrtc_create(const NvrtcEntryPoints& real, nvrtcProgram* program, const char* source, const char* name,
                         int header_count, const char* const* headers, const char* const* include_names) {
  const nvrtcResult result = real.create(program, source, name, header_count, headers, include_names);
  if (result != NVRTC_SUCCESS || program == nullptr || *program == nullptr || source == nullptr) return result;
  try {
    if (!complete_set(real) || link::RuntimeEnvironment::caching_disabled()) return result;
    if (header_count < 0 || (header_count > 0 && (headers == nullptr || include_names == nullptr))) return result;
    std::vector<std::pair<std::string, std::string>> kept;
    for (int i = 0; i < header_count; ++i) {
      // NVRTC takes a null header as an empty one? Not known: such a program is NVRTC's own.
      if (headers[i] == nullptr || include_names[i] == nullptr) return result;
      kept.emplace_back(include_names[i], headers[i]);
    }
    // NVRTC names a program without a name "default_program" (nvrtc.h, nvrtcCreateProgram).
    programs().add(*program, std::make_shared<NvrtcProgram>(*program, name != nullptr ? name : "default_program",
                                                            source, std::move(kept)));
  } catch (...) {
    // No NvrtcProgram: the handle is NVRTC's own from here on.
  }
  return result;
}

nvrtcResult nvrtc_destroy(const NvrtcEntryPoints& real, nvrtcProgram* program) {
  std::shared_ptr<NvrtcProgram> kept;
  try {
    if (program != nullptr) kept = programs().take(*program);
  } catch (...) {
  }
  return real.destroy(program);
}

nvrtcResult nvrtc_add_name_expression(const NvrtcEntryPoints& real, nvrtcProgram program, const char* expression) {
  if (auto kept = find(program)) return kept->add_name_expression(real, expression);
  return real.add_name_expression(program, expression);
}

nvrtcResult nvrtc_compile(const NvrtcEntryPoints& real, nvrtcProgram program, int count, const char* const* options) {
  if (auto kept = find(program)) {
    try {
      link::RuntimeEnvironment environment(false);
      return kept->compile(real, count, options, environment.get());
    } catch (...) {
      if (kept->served()) return NVRTC_ERROR_INTERNAL_ERROR;
    }
  }
  return real.compile(program, count, options);
}

nvrtcResult nvrtc_output_size(const NvrtcEntryPoints& real, nvrtcProgram program, proto::NvrtcOutput which,
                              std::size_t* size) {
  if (auto kept = find(program)) return kept->output_size(real, which, size);
  return real.size_of[static_cast<std::size_t>(which)](program, size);
}

nvrtcResult nvrtc_output_bytes(const NvrtcEntryPoints& real, nvrtcProgram program, proto::NvrtcOutput which,
                               char* out) {
  if (auto kept = find(program)) return kept->output_bytes(real, which, out);
  return real.bytes_of[static_cast<std::size_t>(which)](program, out);
}

nvrtcResult nvrtc_lowered_name(const NvrtcEntryPoints& real, nvrtcProgram program, const char* expression,
                               const char** lowered) {
  if (auto kept = find(program)) return kept->lowered_name(real, expression, lowered);
  return real.get_lowered_name(program, expression, lowered);
}

std::size_t nvrtc_programs_alive() { return programs().size(); }

}  // namespace jitcache::client::nvrtc
