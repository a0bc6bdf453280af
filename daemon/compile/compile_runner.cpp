#include <daemon/compile/compile_runner.hpp>

#include <proto/nvrtc_result.hpp>

#include <signal.h>
#include <string.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string_view>
#include <utility>

#include <common/result.hpp>
#include <daemon/compile/worker_exchange.hpp>
#include <daemon/compile/worker_process.hpp>
#include <daemon/compile/worker_protocol.hpp>

namespace jitcache::daemon::compile {

namespace {

using Clock = std::chrono::steady_clock;

// Rationale: `--version` only loads nvJitLink and asks it; seconds mean something is badly wrong.
constexpr std::chrono::seconds k_probe_timeout{30};
constexpr std::size_t k_max_probe_output = 4096;

std::string signal_text(int signal) {
  const char* abbreviation = ::sigabbrev_np(signal);
  return std::to_string(signal) + (abbreviation != nullptr ? std::string(" (SIG") + abbreviation + ")" : "");
}

std::string seconds_text(std::chrono::milliseconds duration) {
  const auto ms = duration.count();
  return std::to_string(ms / 1000) + (ms % 1000 != 0 ? "." + std::to_string(ms % 1000 + 1000).substr(1) : "") + " s";
}

// Appends what the worker said on stderr, which often names the cause.
std::string with_stderr(std::string message, const std::string& stderr_head) {
  std::string_view said = stderr_head;
  while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.remove_suffix(1);
  if (!said.empty()) message += "; its stderr: " + std::string(said);
  return message;
}

CompileOutcome failed(WorkerFailure failure, std::string message) {
  return CompileOutcome::make_worker_failed(failure, std::move(message));
}

// An NVRTC job's reply (worker_protocol.hpp): its result blob, which must decode whole, is the image.
CompileOutcome from_nvrtc_reply(WorkerReply reply) {
  CompileOutcome outcome;
  outcome.producer = "NVRTC " + std::to_string(reply.nvjitlink_major) + "." + std::to_string(reply.nvjitlink_minor) +
                     " (jitcache-compile)";
  outcome.compile_time_us = reply.compile_time_us;
  if (reply.status == ReplyStatus::refused) {
    return CompileOutcome::make_refused(
        Refusal{RefusalReason::nvrtc, std::string(reply.payload.begin(), reply.payload.end())});
  }
  if (reply.status != ReplyStatus::compiled || !proto::decode_nvrtc_result(reply.payload)) {
    return failed(WorkerFailure::protocol, "the compile worker answered an NVRTC job without an NVRTC result");
  }
  outcome.kind = OutcomeKind::compiled;
  outcome.image = std::move(reply.payload);
  return outcome;
}

CompileOutcome from_reply(WorkerReply reply, bool nvrtc) {
  if (nvrtc) return from_nvrtc_reply(std::move(reply));
  CompileOutcome outcome;
  outcome.producer = "nvJitLink " + std::to_string(reply.nvjitlink_major) + "." + std::to_string(reply.nvjitlink_minor);
  outcome.compile_time_us = reply.compile_time_us;
  std::string text(reply.payload.begin(), reply.payload.end());
  switch (reply.status) {
    case ReplyStatus::compiled: {
      constexpr std::uint8_t k_elf[] = {0x7f, 'E', 'L', 'F'};
      if (reply.payload.size() < sizeof k_elf || !std::equal(k_elf, k_elf + sizeof k_elf, reply.payload.begin())) {
        return failed(WorkerFailure::protocol, "the compile worker reported success but sent no ELF image (" +
                                                   std::to_string(reply.payload.size()) + " bytes)");
      }
      outcome.kind = OutcomeKind::compiled;
      outcome.image = std::move(reply.payload);
      return outcome;
    }
    case ReplyStatus::compile_error:
      outcome.kind = OutcomeKind::compile_error;
      outcome.message = std::move(text);
      return outcome;
    case ReplyStatus::refused: return CompileOutcome::make_refused(Refusal{RefusalReason::arch, std::move(text)});
  }
  return failed(WorkerFailure::protocol, "the compile worker sent an unknown status");
}

CompileOutcome classify(Exchange exchange, const CompileLimits& limits, bool nvrtc) {
  const ExitStatus& status = exchange.status;
  switch (exchange.end) {
    case Exchange::End::stopped:
      return failed(WorkerFailure::cancelled, "the compile was abandoned: the compile service is stopping");
    case Exchange::End::deadline:
      return failed(WorkerFailure::wall_time, "the compile worker was still running at the wall-time limit of " +
                                                  seconds_text(limits.wall_time) + " and was killed");
    case Exchange::End::overflow:
      return failed(WorkerFailure::protocol, "the compile worker wrote more than " +
                                                 std::to_string(k_max_reply_bytes >> 20) + " MiB and was killed");
    case Exchange::End::failed:
      return failed(WorkerFailure::spawn, "waiting for the compile worker failed; it was killed");
    case Exchange::End::output_closed:  // run() finishes such an exchange before it classifies
    case Exchange::End::exited: break;
  }
  if (status.signaled) {
    const bool over_cpu = limits.cpu_time.count() > 0 && status.cpu_time >= limits.cpu_time;
    if (status.signal == SIGXCPU || (status.signal == SIGKILL && over_cpu)) {
      return failed(WorkerFailure::cpu_time, "the compile worker exceeded its CPU time limit of " +
                                                 std::to_string(limits.cpu_time.count()) + " s");
    }
    return failed(WorkerFailure::crashed,
                  with_stderr("the compile worker crashed with signal " + signal_text(status.signal),
                              exchange.stderr_head));
  }
  if (status.code == k_exit_out_of_memory) {
    return failed(WorkerFailure::memory, "the compile worker exceeded its memory limit of " +
                                             std::to_string(limits.address_space_bytes >> 20) + " MiB");
  }
  if (status.code != 0) {
    return failed(WorkerFailure::protocol,
                  with_stderr("the compile worker exited with status " + std::to_string(status.code),
                              exchange.stderr_head));
  }
  auto reply = decode_reply(exchange.stdout_bytes);
  if (!reply) {
    return failed(WorkerFailure::protocol, "the compile worker wrote garbage on its stdout (" +
                                               std::to_string(exchange.stdout_bytes.size()) +
                                               " bytes): " + reply.error().message);
  }
  return from_reply(std::move(*reply), nvrtc);
}

}  // namespace

CompileRunner::CompileRunner(std::string worker_path, CompileLimits limits)
    : m_worker_path(std::move(worker_path)), m_limits(limits) {}

void CompileRunner::keep_spares(std::size_t count) {
  m_spares.reset();
  if (count == 0) return;
  m_spares =
      std::make_unique<SpareWorkers>([this] { return WorkerProcess::spawn(m_worker_path, {}, m_limits); }, count);
}

CompileOutcome CompileRunner::run(const CompileJob& job) {
  const std::atomic<bool> never{false};
  return run(job, never);
}

CompileOutcome CompileRunner::run(const CompileJob& job, const std::atomic<bool>& stop) {
  const auto deadline = Clock::now() + m_limits.wall_time;
  auto process = m_spares ? m_spares->take() : WorkerProcess::spawn(m_worker_path, {}, m_limits);
  if (!process) return failed(WorkerFailure::spawn, "could not start the compile worker: " + process.error().message);
  const auto input = encode_job(job);
  Exchange exchanged = exchange(*process, input, deadline, stop, k_max_reply_bytes, Until::output_closed);
  if (exchanged.end == Exchange::End::output_closed) {
    // Rationale: a reply that decodes whole was written by a worker that finished its job; how it
    // then leaves changes nothing, so it is reaped off this path (worker_reaper.hpp). Anything
    // else is judged by the worker's exit, as before.
    if (auto reply = decode_reply(exchanged.stdout_bytes)) {
      m_reaper.adopt(std::move(*process));
      return from_reply(std::move(*reply), job.nvrtc.has_value());
    }
    finish_exchange(*process, exchanged, deadline, stop);
  }
  return classify(std::move(exchanged), m_limits, job.nvrtc.has_value());
}

common::Result<ToolkitVersion> CompileRunner::probe_toolkit() {
  const auto deadline = Clock::now() + k_probe_timeout;
  auto process = WorkerProcess::spawn(m_worker_path, {"--version"}, m_limits);
  JITCACHE_TRY(process);
  const std::atomic<bool> never{false};
  const Exchange result = exchange(*process, {}, deadline, never, k_max_probe_output);
  const std::string text(result.stdout_bytes.begin(), result.stdout_bytes.end());
  const auto bad = [&] {
    return common::make_error(common::ErrorCode::unavailable,
                              with_stderr(m_worker_path + " --version did not print \"nvJitLink X.Y\" (got \"" +
                                              text.substr(0, 80) + "\")",
                                          result.stderr_head));
  };
  constexpr std::string_view k_prefix = "nvJitLink ";
  if (result.end != Exchange::End::exited || !result.status.exited || result.status.code != 0 ||
      !text.starts_with(k_prefix)) {
    return bad();
  }
  ToolkitVersion version;
  const char* at = text.data() + k_prefix.size();
  const char* end = text.data() + text.size();
  auto parsed = std::from_chars(at, end, version.major);
  if (parsed.ec != std::errc() || parsed.ptr == end || *parsed.ptr != '.') return bad();
  parsed = std::from_chars(parsed.ptr + 1, end, version.minor);
  if (parsed.ec != std::errc()) return bad();
  // The second line, "API BUILD": the library's build, which links are keyed on. A worker of before
  // link compiles prints none; a line that does not read is no identity (no links, no failure).
  m_linker.reset();
  if (const std::size_t newline = text.find('\n'); newline != std::string::npos) {
    const std::string second = text.substr(newline + 1, text.find('\n', newline + 1) - newline - 1);
    const std::size_t space = second.find(' ');
    proto::DriverId linker;
    if (space != std::string::npos &&
        std::from_chars(second.data(), second.data() + space, linker.api).ec == std::errc()) {
      linker.build = second.substr(space + 1);
      if (linker.api > 0 && !linker.build.empty() && linker.build.size() <= proto::k_max_driver_build_length) {
        m_linker = std::move(linker);
      }
    }
  }
  return version;
}

common::Result<proto::NvrtcIdentity> CompileRunner::probe_nvrtc(const std::string& library) {
  const auto deadline = Clock::now() + k_probe_timeout;
  auto process = WorkerProcess::spawn(m_worker_path, {"--nvrtc-identity", library}, m_limits);
  JITCACHE_TRY(process);
  const std::atomic<bool> never{false};
  const Exchange result = exchange(*process, {}, deadline, never, k_max_probe_output);
  const std::string text(result.stdout_bytes.begin(), result.stdout_bytes.end());
  if (result.end != Exchange::End::exited || !result.status.exited || result.status.code != 0) {
    return common::make_error(common::ErrorCode::unavailable,
                              with_stderr("the compile worker could not open it", result.stderr_head));
  }
  auto identity = parse_nvrtc_identity_line(text.substr(0, text.find('\n')));
  if (!identity) {
    return common::make_error(common::ErrorCode::unavailable,
                              "the compile worker's answer does not read (\"" + text.substr(0, 120) + "\")");
  }
  return *identity;
}

std::optional<proto::NvrtcIdentity> parse_nvrtc_identity_line(std::string_view line) {
  constexpr std::string_view k_prefix = "NVRTC ";
  if (!line.starts_with(k_prefix)) return std::nullopt;
  line.remove_prefix(k_prefix.size());
  proto::NvrtcIdentity identity;
  const char* at = line.data();
  const char* end = line.data() + line.size();
  auto parsed = std::from_chars(at, end, identity.major);
  if (parsed.ec != std::errc() || parsed.ptr == end || *parsed.ptr != '.' || identity.major <= 0) return std::nullopt;
  parsed = std::from_chars(parsed.ptr + 1, end, identity.minor);
  if (parsed.ec != std::errc() || identity.minor < 0) return std::nullopt;
  std::string_view rest(parsed.ptr, static_cast<std::size_t>(end - parsed.ptr));
  for (proto::Checksum128* digest : {&identity.library, &identity.builtins}) {
    if (rest.size() < 33 || rest.front() != ' ') return std::nullopt;
    for (std::size_t i = 0; i < digest->bytes.size(); ++i) {
      unsigned value = 0;
      const char* hex = rest.data() + 1 + 2 * i;
      if (std::from_chars(hex, hex + 2, value, 16).ec != std::errc() ||
          !std::isxdigit(static_cast<unsigned char>(hex[1])))
        return std::nullopt;
      digest->bytes[i] = static_cast<std::uint8_t>(value);
    }
    rest.remove_prefix(33);
  }
  if (!rest.empty()) return std::nullopt;
  return identity;
}

}  // namespace jitcache::daemon::compile
