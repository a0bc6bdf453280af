// Transparent mode for link sessions (docs/transparent.md "Link sessions"): the unmodified link
// programs (tests/programs/link_*.c) run under libjitcache-preload.so against the real daemon — (d)
// a cuLink* session of two PTX inputs, one calling an extern .func of the other (fake driver), and
// (f) an nvJitLink link of the same two (the toolkit's real libnvJitLink). The second run of each is
// a hit in the daemon's counters and prints exactly what the first printed, the linked image's
// fingerprint included, and its JITCACHE_REPORT names the Complete it called with outcome hit; with
// the daemon down, hung or answering garbage, and with JITCACHE_DISABLE=1, each still prints the same.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/transparent_check.hpp>

using jitcache::testing::ChildResult;
using jitcache::testing::DaemonProcess;
using jitcache::testing::EnvChange;
using jitcache::testing::run_child;
using jitcache::testing::stat_value;
using jitcache::testing::TempDir;
using jitcache::testing::transparent::check_twice;

namespace {

const std::string k_caller = std::string(JITCACHE_TEST_DATA_DIR) + "/link/link_caller.ptx";
const std::string k_callee = std::string(JITCACHE_TEST_DATA_DIR) + "/link/link_callee.ptx";

ChildResult run_program(const std::vector<std::string>& args, const std::vector<EnvChange>& env) {
  std::vector<std::string> argv = {std::string(JITCACHE_LINK_PROGRAMS_DIR) + "/" + args.front()};
  argv.insert(argv.end(), args.begin() + 1, args.end());
  return run_child(argv, env, std::chrono::seconds(60));
}

// `entry_point` is the Complete the second run's JITCACHE_REPORT must name with outcome "hit"; every
// link program prints the linked image's fingerprint, so equal outputs mean equal images.
void check_link(const std::vector<std::string>& args, const std::string& expect_in_output,
                const std::string& entry_point) {
  check_twice([&](const std::vector<EnvChange>& env) { return run_program(args, env); }, expect_in_output, entry_point);
}

}  // namespace

TEST_CASE("transparent links: (d) a cuLink* session of two PTX inputs, direct binding, is a hit the second time") {
  check_link({"link_culink", k_caller, k_callee, "apply_scale", "direct"}, "apply_scale: 0", "cuLinkComplete");
}

TEST_CASE("transparent links: (d) cuLink* reached through cuGetProcAddress_v2 is cached") {
  check_link({"link_culink", k_caller, k_callee, "apply_scale", "proc"}, "apply_scale: 0", "cuLinkComplete");
}

TEST_CASE("transparent links: (d) a cuLink* input added by cuLinkAddFile is cached") {
  check_link({"link_culink", k_caller, k_callee, "apply_scale", "file"}, "cuLinkAddFile callee: 0", "cuLinkComplete");
}

TEST_CASE("transparent links: (f) an nvJitLink link of two PTX inputs (versioned names) is a hit the second time") {
  check_link({"link_nvjitlink", k_caller, k_callee, "sm_90", "data"}, "nvJitLinkComplete: 0",
             "__nvJitLinkComplete_13_0");
}

TEST_CASE("transparent links: (f) an nvJitLink input added by nvJitLinkAddFile is cached") {
  check_link({"link_nvjitlink", k_caller, k_callee, "sm_90", "file"}, "nvJitLinkAddFile callee: 0",
             "__nvJitLinkComplete_13_0");
}

TEST_CASE("transparent links: (f) nvJitLink's unversioned names through dlopen + dlsym are cached") {
  check_link({"link_nvjitlink", k_caller, k_callee, "sm_80", "dlsym"}, "nvJitLinkComplete: 0", "nvJitLinkComplete");
}
