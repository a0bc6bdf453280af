// `jitcache doctor`'s checks of what the daemon reports about itself: its compile worker (STATS
// compile_worker_*, and its nvJitLink against this host's driver), the space left under its store
// against max_size (STATS store_free_bytes), and its fleet tier (REMOTE_CHECK). A daemon older than
// these figures is reported as such, from what HELLO says.
#include <client/cli/doctor_checks.hpp>

#include <client/cli/format.hpp>
#include <proto/remote_check_messages.hpp>
#include <proto/wire.hpp>

namespace jitcache::client::cli {

namespace {

// Rationale: SQLite's WAL beside the database is truncated back to 64 MiB after a checkpoint, and
// one transaction can make it larger first (docs/operations.md "Full disks"): with less free than
// that, PUTs fail with no_space whatever max_size says.
constexpr std::uint64_t k_min_free_bytes = 64ull << 20;

std::string version_text(std::uint64_t version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

constexpr const char* k_worker_fix =
    "check compile_worker in jitcached's configuration (default: jitcache-compile beside jitcached, or "
    "<libexecdir>/jitcache/jitcache-compile) and that libnvJitLink.so.13 can be loaded by it (`jitcache-compile "
    "--version` runs the same probe); jitcached's log names the worker and why it failed; then restart jitcached";

}  // namespace

Finding check_compile_worker(const DoctorContext& context) {
  const auto ready = context.figure("compile_worker_ready");
  const auto failed = context.figure("compile_worker_probe_failed");
  const auto version = context.figure("compile_nvjitlink_version");
  const bool compiles = context.hello && (context.hello->capabilities & proto::k_capability_compile) != 0;
  if (!ready || !failed) {
    // A daemon older than these figures: only HELLO says whether it compiles.
    if (compiles)
      return Finding("compile_worker", Severity::ok, "jitcached compiles misses (it does not report its worker)");
    return Finding("compile_worker", Severity::warning,
                   "jitcached does not compile misses, and does not say why: each program JITs its own", k_worker_fix);
  }
  Json details{{"ready", *ready != 0}, {"probe_failed", *failed != 0}, {"nvjitlink_version", version.value_or(0)}};
  if (*failed != 0) {
    Finding finding("compile_worker", Severity::error,
                    "the compile worker failed its start-up probe: jitcached compiles nothing, and each program JITs "
                    "its misses with its own driver (slower, and the result is not shared)",
                    k_worker_fix);
    finding.details = std::move(details);
    return finding;
  }
  if (*ready == 0) {
    Finding finding("compile_worker", Severity::ok,
                    "compiling is turned off (compile = false): each program JITs its misses with its own driver");
    finding.details = std::move(details);
    return finding;
  }
  const std::uint64_t nvjitlink = version.value_or(0);
  std::string message = "the compile worker passed its probe: nvJitLink " + version_text(nvjitlink);
  Finding finding("compile_worker", Severity::ok, "");
  if (context.driver_api == 0) {
    message += " (not compared with a driver: there is none here)";
  } else if (nvjitlink / 1000 > static_cast<std::uint64_t>(context.driver_api) / 1000) {
    // docs/driver-facts.md §2 "Compatibility": a cubin from toolkit major N needs a driver of major
    // N or later; the daemon refuses such compiles (driver_too_old) rather than store what would
    // not load.
    finding.severity = Severity::error;
    message += ", newer than this host's driver (" + version_text(static_cast<std::uint64_t>(context.driver_api)) +
               "): its cubins would not load here, so jitcached refuses to compile for this driver and every program "
               "JITs its own misses";
    finding.fix = "upgrade the NVIDIA driver to a release of CUDA " + std::to_string(nvjitlink / 1000) +
                  " or later, or give jitcached a compile worker built with the driver's CUDA major";
  } else {
    message += ", which this host's driver (" + version_text(static_cast<std::uint64_t>(context.driver_api)) +
               ") can load the output of";
  }
  finding.message = std::move(message);
  finding.details = std::move(details);
  return finding;
}

Finding check_disk_space(const DoctorContext& context) {
  const auto free_bytes = context.figure("store_free_bytes");
  const auto filesystem = context.figure("store_filesystem_bytes");
  const auto max_size = context.figure("max_size");
  const std::uint64_t stored = context.figure("bytes_stored").value_or(0);
  if (!free_bytes || !filesystem || !max_size) {
    return Finding("disk_space", Severity::ok, "not checked: this jitcached does not report the space under its store");
  }
  Json details{{"free_bytes", *free_bytes},
               {"filesystem_bytes", *filesystem},
               {"max_size", *max_size},
               {"bytes_stored", stored}};
  auto finding_with = [&](Severity severity, std::string message, std::string fix = {}) {
    Finding finding("disk_space", severity, std::move(message), std::move(fix));
    finding.details = details;
    return finding;
  };
  if (*filesystem == 0) {
    return finding_with(Severity::warning, "jitcached could not measure the filesystem that holds its store",
                        "look at jitcached's state directory: it should be a directory the daemon can reach");
  }
  const std::string space = human_bytes(*free_bytes) + " free of " + human_bytes(*filesystem) +
                            " on the store's filesystem; the store holds " + human_bytes(stored);
  if (*free_bytes < k_min_free_bytes) {
    return finding_with(Severity::error,
                        space +
                            ": too little for the database's write-ahead log, so PUTs fail with no_space and "
                            "new compiles are not kept (docs/operations.md \"Full disks\")",
                        "free space on that filesystem, or move jitcached's state_dir to a larger one; keep "
                        "max_size below what is free");
  }
  if (*max_size == 0) {
    return finding_with(Severity::warning, space + ", and max_size = 0 (no limit): it grows until the disk is full",
                        "set max_size to at most " + human_bytes(stored + *free_bytes - k_min_free_bytes) +
                            " in jitcached's configuration");
  }
  const std::uint64_t growth = *max_size > stored ? *max_size - stored : 0;
  if (growth > *free_bytes - k_min_free_bytes) {
    return finding_with(Severity::warning,
                        space + ", but max_size is " + human_bytes(*max_size) +
                            ": the disk fills before eviction starts, and PUTs then fail with no_space",
                        "lower max_size to at most " + human_bytes(stored + *free_bytes - k_min_free_bytes) +
                            " (what is free, less 64 MiB for the write-ahead log), or free space on that filesystem");
  }
  return finding_with(Severity::ok, space + ", within max_size " + human_bytes(*max_size));
}

Finding check_remote(DoctorContext& context) {
  if (!context.hello || (context.hello->capabilities & proto::k_capability_remote_check) == 0) {
    return Finding("remote", Severity::ok, "not checked: this jitcached has no fleet tier (no REMOTE_CHECK)");
  }
  auto reply = context.client->remote_check(/*probe=*/true);
  bool probed = true;
  if (!reply && reply.error().reply_status == static_cast<std::uint16_t>(proto::Status::forbidden)) {
    // Only trusted callers may have the daemon probe its remotes; what it knows without probing
    // (each circuit breaker) is anyone's.
    probed = false;
    reply = context.client->remote_check(/*probe=*/false);
  }
  if (!reply) {
    return Finding("remote", Severity::warning, "REMOTE_CHECK failed: " + reply.error().message,
                   "`jitcache remote status` shows what jitcached knows of its remotes");
  }
  if (reply->remotes.empty()) return Finding("remote", Severity::ok, "no remote configured");
  Json remotes = Json::array();
  std::string problems;
  for (std::size_t i = 0; i < reply->remotes.size(); ++i) {
    const proto::RemoteCheckRemote& remote = reply->remotes[i];
    remotes.push_back(Json{{"name", remote.name},
                           {"breaker", proto::breaker_state_name(remote.breaker)},
                           {"reachable", proto::probe_answer_name(remote.reachable)},
                           {"writable", proto::probe_answer_name(remote.writable)},
                           {"message", remote.message}});
    std::string problem;
    if (probed && remote.reachable != proto::ProbeAnswer::yes) {
      problem = "not reachable";
    } else if (probed && !reply->signer.empty() && remote.writable != proto::ProbeAnswer::yes) {
      problem = "not writable";
    } else if (!probed && remote.breaker != proto::BreakerState::closed) {
      problem = "circuit breaker " + std::string(proto::breaker_state_name(remote.breaker));
    }
    if (problem.empty()) continue;
    if (!remote.message.empty()) problem += " (" + remote.message + ")";
    problems += (problems.empty() ? "" : "; ") + std::string("remote ") + std::to_string(i) + " " + remote.name + ": " +
                problem;
  }
  if (!reply->signing_message.empty()) {
    problems += (problems.empty() ? "" : "; ") + std::string("the signing self-test failed: ") + reply->signing_message;
  }
  std::string message = std::to_string(reply->remotes.size()) + (reply->remotes.size() == 1 ? " remote" : " remotes") +
                        (probed ? ", probed now" : ", not probed (only trusted callers may have jitcached probe)");
  Finding finding("remote", Severity::ok, message);
  if (!problems.empty()) {
    finding.severity = Severity::warning;
    finding.message += ": " + problems + "; the local cache still serves";
    finding.fix =
        "`jitcache remote check` shows each remote; docs/operations.md \"A fleet\" says what each answer means";
  } else {
    finding.message += ": every one " + std::string(probed ? "reachable" : "with its circuit breaker closed");
  }
  finding.details = Json{{"probed", probed}, {"remotes", std::move(remotes)}};
  return finding;
}

}  // namespace jitcache::client::cli
