// One NVRTC program through the cache (docs/transparent.md "NVRTC compiles"), by the real
// nvrtcProgram the program holds (nvrtcCreateProgram always runs for real, so every call the cache
// does not answer reaches a real program):
//
//   create    a copy of the name, source and headers is kept
//   name      nvrtcAddNameExpression runs for real, and the expression is kept
//   compile   the key (proto/nvrtc_key.hpp): options canonicalised (an unknown or side-effect option
//             makes the compile NVRTC's own), the library's identity, the include record. A hit
//             does not compile: the program is served from the cached result. A miss compiles for
//             real, asks the real program every question a program can ask afterwards, and PUTs
//             the answers (only for NVRTC_SUCCESS and NVRTC_ERROR_COMPILATION: an out-of-memory,
//             cancelled or internal failure is not the source's answer). Before that, a compile
//             that reads nothing from disk (proto/nvrtc_daemon_eligibility.hpp) goes to the daemon
//             when it offers NVRTC_COMPILE: its NVRTC, the same bytes as the program's, compiles
//             it, the result is shared, and the program is served from it as from a hit; any
//             failure of that route (refused, another NVRTC, a timeout) compiles here as above
//   after     a served program answers GetPTX/CUBIN/LTOIR/OptiXIR{Size,}, GetProgramLog{Size,} and
//             GetLoweredName from the result, byte for byte and code for code; a further
//             AddNameExpression gets NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION as NVRTC
//             gives it; a second compile goes to the real program, which answers from then on.
//             Every other program forwards every call to the real one.
//
// Anything odd (no daemon, a refused LOOKUP, a result that does not decode) ends in the real call.
// Thread safety: every method takes the program's mutex.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <client/src/link/link_environment.hpp>
#include <client/src/loader/load_record.hpp>
#include <client/src/nvrtc/nvrtc_entry_points.hpp>
#include <client/src/nvrtc/program_name_use.hpp>
#include <proto/nvrtc_key.hpp>
#include <proto/nvrtc_note_messages.hpp>
#include <proto/nvrtc_result.hpp>

namespace jitcache::client::nvrtc {

class NvrtcProgram {
 public:
  NvrtcProgram(nvrtcProgram real, std::string name, std::string source,
               std::vector<std::pair<std::string, std::string>> headers);

  nvrtcResult add_name_expression(const NvrtcEntryPoints& real, const char* expression);
  nvrtcResult compile(const NvrtcEntryPoints& real, int count, const char* const* options,
                      const link::LinkEnvironment& env);
  nvrtcResult output_size(const NvrtcEntryPoints& real, proto::NvrtcOutput which, std::size_t* size);
  nvrtcResult output_bytes(const NvrtcEntryPoints& real, proto::NvrtcOutput which, char* out);
  nvrtcResult lowered_name(const NvrtcEntryPoints& real, const char* expression, const char** lowered);

  bool served() const;

 private:
  nvrtcResult compile_keyed(const NvrtcEntryPoints& real, int count, const char* const* options,
                            const link::LinkEnvironment& env, loader::LoadRecord& record);
  proto::NvrtcResult answers_of(const NvrtcEntryPoints& real, nvrtcResult compiled) const;
  proto::NvrtcResult answers_of(const NvrtcEntryPoints& real, nvrtcProgram program, nvrtcResult compiled) const;
  // The answers NVRTC gives this program (source, headers, name expressions) under `name`, compiled
  // by a real program of its own with `options`; nullopt when NVRTC fails for a reason other than
  // the source.
  std::optional<proto::NvrtcResult> answers_under(const NvrtcEntryPoints& real, const std::string& name, int count,
                                                  const char* const* options) const;
  // What a miss's `answers` may be stored as under the key relative to the program's directory:
  // as they are, with the directory cut out of the log (docs/cache-key.md "The program's name"), or
  // nullopt (keyed with the name). `key_note` says which and why, for the report.
  std::optional<proto::NvrtcResult> shared_answers(const NvrtcEntryPoints& real, int count, const char* const* options,
                                                   const ProgramTexts& texts, std::string_view include_record,
                                                   const proto::NvrtcResult& answers, std::string& key_note) const;
  // NVRTC_COMPILE for an eligible compile: the program is served from the daemon's result (the
  // compile's result returned), or nullopt: compile here.
  std::optional<nvrtcResult> compile_by_daemon(const proto::NvrtcCompileInput& input, const proto::KeyFields& key,
                                               int count, const char* const* options, const link::LinkEnvironment& env,
                                               loader::LoadRecord& record);
  // Tells the daemon (NVRTC_NOTE) that this compile was NVRTC's own, and why.
  void note_uncached(const link::LinkEnvironment& env, proto::NvrtcUncachedReason reason);

  mutable std::mutex m_mutex;
  nvrtcProgram m_real;
  std::string m_name;
  std::string m_source;
  std::vector<std::pair<std::string, std::string>> m_headers;
  std::vector<std::string> m_expressions;
  bool m_compiled = false;
  std::optional<proto::NvrtcResult> m_served;
  // The last compile was NVRTC's own, for this reason (told to the daemon after it).
  std::optional<proto::NvrtcUncachedReason> m_uncached;
  bool m_daemon_down = false;  // the last compile found the daemon unusable
};

}  // namespace jitcache::client::nvrtc
