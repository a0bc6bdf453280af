// The per-toolkit tables (daemon/compile/toolkit_support.hpp) against the nvJitLink this build
// links: every arch from sm_30 to sm_130, plain, `a` and `f`, is accepted by the library exactly
// when the table says so, and the newest PTX ISA in the table is the newest the library reads. A
// toolkit upgrade that changes either fails here until its row is added.
#include <catch2/catch.hpp>

#include <nvJitLink.h>

#include <cstring>
#include <string>

#include <daemon/compile/toolkit_support.hpp>

namespace {

using namespace jitcache::daemon::compile;

ToolkitVersion linked_version() {
  ToolkitVersion version;
  REQUIRE(nvJitLinkVersion(&version.major, &version.minor) == NVJITLINK_SUCCESS);
  return version;
}

// Whether the library compiles `ptx` for `arch` (every step checked).
bool compiles(const std::string& arch, const std::string& ptx) {
  const std::string option = "-arch=" + arch;
  const char* options[] = {option.c_str()};
  nvJitLinkHandle handle = nullptr;
  if (nvJitLinkCreate(&handle, 1, options) != NVJITLINK_SUCCESS) return false;
  bool ok = nvJitLinkAddData(handle, NVJITLINK_INPUT_PTX, ptx.data(), ptx.size(), "t.ptx") == NVJITLINK_SUCCESS &&
            nvJitLinkComplete(handle) == NVJITLINK_SUCCESS;
  nvJitLinkDestroy(&handle);
  return ok;
}

std::string tiny_ptx(const std::string& version) {
  return ".version " + version + "\n.target sm_50\n.address_size 64\n.visible .entry k() { ret; }\n";
}

}  // namespace

TEST_CASE("compile toolkit support: the arch table agrees with the linked nvJitLink on every arch") {
  const ToolkitVersion version = linked_version();
  if (!can_target(version, "sm_90")) {
    FAIL("nvJitLink " << to_string(version) << " has no row in the arch table (toolkit_support.cpp): add one");
  }
  const std::string ptx = tiny_ptx("8.0");
  for (unsigned sm = 30; sm <= 130; ++sm) {
    for (const char* suffix : {"", "a", "f"}) {
      const std::string arch = "sm_" + std::to_string(sm) + suffix;
      INFO(arch);
      CHECK(*can_target(version, arch) == compiles(arch, ptx));
    }
  }
}

TEST_CASE("compile toolkit support: the newest PTX ISA in the table is the newest the linked nvJitLink reads") {
  const ToolkitVersion version = linked_version();
  const auto max = max_ptx_isa(version);
  REQUIRE(max);
  CHECK(compiles("sm_90", tiny_ptx(to_string(*max))));
  CHECK_FALSE(compiles("sm_90", tiny_ptx(to_string(PtxIsa{max->major, max->minor + 1}))));
}

TEST_CASE("compile toolkit support: unknown versions and malformed archs") {
  CHECK_FALSE(max_ptx_isa(ToolkitVersion{11, 8}));
  CHECK_FALSE(can_target(ToolkitVersion{12, 9}, "sm_90"));
  CHECK(can_target(ToolkitVersion{13, 0}, "compute_90") == false);
  CHECK(can_target(ToolkitVersion{13, 0}, "sm_") == false);
  CHECK(can_target(ToolkitVersion{13, 0}, "sm_90x") == false);
  CHECK(producer_name(ToolkitVersion{13, 0}) == "nvJitLink 13.0");
}
