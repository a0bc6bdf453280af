// The builtins library of an NVRTC variant (client/src/nvrtc/nvrtc_identity.hpp): the toolkit ships
// libnvrtc.alt.so.13 beside libnvrtc.so.13, and the alternative opens libnvrtc-builtins.alt.so.13.0
// (strace -e openat of tests/programs/nvrtc_compile.c with NVRTC_LIBRARY=libnvrtc.alt.so.13), not
// libnvrtc-builtins.so.13.0. The identity must digest the builtins the library opens, or a change of
// those would not change the key. The library here is a copy of libm named as NVRTC's variant (dladdr
// names the file holding the function; its bytes are not NVRTC's, which the identity does not need).
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <client/src/nvrtc/nvrtc_identity.hpp>
#include <tests/support/temp_dir.hpp>

using jitcache::client::nvrtc::file_digest;
using jitcache::client::nvrtc::nvrtc_identity;
using jitcache::testing::TempDir;
using jitcache::testing::write_file;

namespace {

int version_13_0(int* major, int* minor) {
  *major = 13;
  *minor = 0;
  return 0;
}

}  // namespace

TEST_CASE("nvrtc identity: the alternative libnvrtc.alt is keyed on libnvrtc-builtins.alt, the builtins it opens") {
  TempDir dir;
  const std::string library = dir.file("libnvrtc.alt.so.13");
  void* libm = ::dlopen("libm.so.6", RTLD_NOW | RTLD_NOLOAD);
  if (libm == nullptr) libm = ::dlopen("libm.so.6", RTLD_NOW);
  REQUIRE(libm != nullptr);
  Dl_info info{};
  REQUIRE(::dladdr(::dlsym(libm, "cos"), &info) != 0);
  std::filesystem::copy_file(info.dli_fname, library);
  write_file(dir.file("libnvrtc-builtins.so.13.0"), "the builtins of libnvrtc.so.13");
  write_file(dir.file("libnvrtc-builtins.alt.so.13.0"), "the builtins of libnvrtc.alt.so.13");

  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(handle != nullptr);
  auto identity = nvrtc_identity(::dlsym(handle, "cos"), &version_13_0);
  REQUIRE(identity);
  auto alt = file_digest(dir.file("libnvrtc-builtins.alt.so.13.0"));
  REQUIRE(alt);
  CHECK(identity->builtins == *alt);
  ::dlclose(handle);
}
