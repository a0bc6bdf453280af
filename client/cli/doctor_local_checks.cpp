// `jitcache doctor`'s checks of this host and this environment, which need no daemon: the client's
// own version and settings, the CUDA driver libjitcache would open (client/src/driver/; a host
// without one is a warning, never a crash), and what `jitcache run` needs (its preload library) and
// whether the environment already preloads it.
#include <client/cli/doctor_checks.hpp>

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <vector>

#include <jitcache/jitcache.h>
#include <client/cli/preload_library.hpp>
#include <client/src/driver/driver_api.hpp>
#include <client/src/loader/client_settings.hpp>

#ifndef JITCACHE_VERSION
#define JITCACHE_VERSION "unknown"
#endif

namespace jitcache::client::cli {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_preload_name = "libjitcache-preload.so";

std::string api_text(int api) {
  return std::to_string(api / 1000) + "." + std::to_string((api % 1000) / 10) + " (" + std::to_string(api) + ")";
}

// The entries of LD_PRELOAD, which the dynamic loader separates by colons or spaces.
std::vector<std::string> preload_entries(std::string_view value) {
  std::vector<std::string> entries;
  std::string entry;
  for (const char c : value) {
    if (c == ':' || c == ' ') {
      if (!entry.empty()) entries.push_back(std::move(entry));
      entry.clear();
    } else {
      entry += c;
    }
  }
  if (!entry.empty()) entries.push_back(std::move(entry));
  return entries;
}

}  // namespace

Finding check_library() {
  const loader::ClientSettings settings = loader::resolve_settings(nullptr);
  std::string message = std::string("jitcache ") + JITCACHE_VERSION + ", libjitcache " +
                        std::to_string(JITCACHE_VERSION_MAJOR) + "." + std::to_string(JITCACHE_VERSION_MINOR) + "." +
                        std::to_string(JITCACHE_VERSION_PATCH) + ", built against CUDA " +
                        api_text(driver::k_built_against_api);
  Finding finding("library", Severity::ok, message);
  finding.details = Json{{"version", JITCACHE_VERSION},
                         {"built_against_api", driver::k_built_against_api},
                         {"disabled", settings.disabled}};
  if (settings.disabled) {
    finding.severity = Severity::warning;
    finding.message += "; caching is turned off in this environment (" + settings.disabled_by +
                       "): libjitcache loads every module without the cache";
    finding.fix = "unset JITCACHE_DISABLE where programs should use the cache";
  }
  if (!settings.notes.empty()) {
    finding.severity = Severity::warning;
    finding.message += "; " + settings.notes;
    if (finding.fix.empty()) finding.fix = "correct the configuration file, or point JITCACHE_CONFIG at another";
  }
  return finding;
}

Finding check_driver(DoctorContext& context) {
  const std::string path = driver::default_driver_path();
  auto opened = driver::open_driver(path);
  if (!opened) {
    Finding finding("driver", Severity::warning, "no CUDA driver: " + opened.error().message,
                    "on a GPU host, install the NVIDIA driver (it provides libcuda.so.1) or set JITCACHE_CUDA_DRIVER "
                    "to its path; without one, no program here loads kernels, though jitcached still serves and "
                    "compiles");
    finding.details = Json{{"path", path}, {"found", false}};
    return finding;
  }
  const driver::DriverApi& api = **opened;
  context.driver_api = api.api_version;
  Finding finding("driver", Severity::ok,
                  "CUDA driver API " + api_text(api.api_version) + ", build " + api.build + " (" + api.library_path +
                      "); libjitcache was built against " + api_text(driver::k_built_against_api));
  finding.details = Json{{"path", api.library_path},
                         {"found", true},
                         {"api_version", api.api_version},
                         {"build", api.build},
                         {"missing_entry_points", api.missing}};
  if (const std::string missing = api.missing_summary(); !missing.empty()) {
    finding.severity = Severity::warning;
    finding.message += "; " + missing;
    finding.fix = "upgrade the NVIDIA driver";
  }
  return finding;
}

Finding check_preload() {
  auto library = find_preload_library();
  const char* preload_variable = std::getenv("LD_PRELOAD");
  const std::string preload = preload_variable != nullptr ? preload_variable : "";
  Json details{{"library", library ? Json(*library) : Json(nullptr)}, {"ld_preload", preload}};
  if (!library) {
    Finding finding("preload", Severity::warning, "`jitcache run` cannot start programs: " + library.error().message,
                    "install the package's libjitcache-preload.so beside jitcache, or set JITCACHE_PRELOAD_LIBRARY to "
                    "its path");
    details["in_effect"] = false;
    finding.details = std::move(details);
    return finding;
  }
  // In effect: an entry of LD_PRELOAD names the preload library, by its name or as the same file.
  std::string named;
  for (const std::string& entry : preload_entries(preload)) {
    std::error_code ec;
    if (fs::path(entry).filename().string() == k_preload_name || fs::equivalent(entry, *library, ec)) {
      named = entry;
      break;
    }
  }
  details["in_effect"] = !named.empty();
  // The shim loads its core from its own directory (docs/transparent.md "The shim and the core");
  // without it every program runs, uncached.
  const std::string core = (fs::path(*library).parent_path() / "libjitcache-preload-core.so").string();
  details["core"] = core;
  if (struct stat st{}; ::stat(core.c_str(), &st) != 0 && fs::path(*library).filename() == k_preload_name) {
    Finding finding("preload", Severity::warning,
                    "`jitcache run` preloads " + *library + ", but its core " + core + " cannot be opened (" +
                        std::strerror(errno) + "): programs run without the cache",
                    "install libjitcache-preload-core.so beside libjitcache-preload.so (the package does)");
    finding.details = std::move(details);
    return finding;
  }
  Finding finding("preload", Severity::ok, "`jitcache run` preloads " + *library);
  if (named.empty()) {
    finding.message +=
        "; LD_PRELOAD does not name it here, so only programs started with `jitcache run` (or linked with "
        "libjitcache) use the cache";
  } else if (struct stat st{}; ::stat(named.c_str(), &st) != 0) {
    finding.severity = Severity::warning;
    finding.message += "; LD_PRELOAD names " + named + ", which cannot be opened (" + std::strerror(errno) +
                       "): the loader skips it and programs run without the cache";
    finding.fix = "start programs with `jitcache run`, which sets LD_PRELOAD to the library it found";
  } else {
    finding.message += "; LD_PRELOAD has " + named + " in effect: programs started from here use the cache";
  }
  finding.details = std::move(details);
  return finding;
}

}  // namespace jitcache::client::cli
