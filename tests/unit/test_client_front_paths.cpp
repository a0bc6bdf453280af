// The front's path text (client/front/front_paths.h) against std::filesystem, which the full CLI
// uses: the path `jitcache run` puts into LD_PRELOAD and JITCACHE_SOCKET must be the same string
// whichever of the two ran it.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

extern "C" {
#include <client/front/front_paths.h>
}

namespace {

namespace fs = std::filesystem;

std::string taken(char* text) {
  REQUIRE(text != nullptr);
  const std::unique_ptr<char, decltype(&std::free)> owner(text, &std::free);
  return text;
}

const char* const k_paths[] = {"/usr/bin/../lib/x86_64-linux-gnu/libjitcache-preload.so",
                               "/usr/libexec/jitcache/../../lib/libjitcache-preload.so",
                               "//usr///lib/./a.so",
                               "/a/b/..",
                               "/a/b/../",
                               "/a/b/.",
                               "/a/b/",
                               "/a//b//",
                               "/..",
                               "/../..",
                               "/../a/../../b",
                               "/",
                               "//",
                               "///",
                               "//.",
                               "/.",
                               "/a/./../b/./c",
                               "/a/..b/.c/...",
                               "relative.so",
                               "./relative.so",
                               "../up/lib.so",
                               "dir/../lib.so",
                               "dir/",
                               "..",
                               "."};

}  // namespace

TEST_CASE("front paths: absolute and lexically normal as std::filesystem makes them") {
  for (const char* path : k_paths) {
    INFO(path);
    CHECK(taken(front_absolute(path)) == fs::absolute(path).string());
    CHECK(taken(front_absolute_normal(path)) == fs::absolute(path).lexically_normal().string());
  }
}

TEST_CASE("front paths: from the root directory, a relative path gets one separator") {
  const fs::path before = fs::current_path();
  fs::current_path("/");
  const std::string absolute = taken(front_absolute("x.sock"));
  const std::string normal = taken(front_absolute_normal("a/../x.so"));
  fs::current_path(before);
  CHECK(absolute == "/x.sock");
  CHECK(normal == "/x.so");
}

TEST_CASE("front paths: the executable's directory is /proc/self/exe's parent") {
  CHECK(taken(front_own_directory()) == fs::read_symlink("/proc/self/exe").parent_path().string());
  CHECK(taken(front_join("/usr/bin", "../libexec/jitcache/jitcache-cli")) ==
        "/usr/bin/../libexec/jitcache/jitcache-cli");
}
