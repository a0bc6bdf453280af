// The include scan probes the places NVRTC 13.0 looks, and no others (strace -e stat,openat of
// tests/programs/nvrtc_compile, docs/cache-key.md "Files read from disk"): a bracketed name in the
// include paths only, a quoted one from a file on disk in that file's directory and the include
// paths, a quoted one from the source in the working directory too. A place probed beyond those
// lets whoever can write it (a FIFO planted in /tmp as the working directory) make a compile
// NVRTC's own that never looks there.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <client/src/nvrtc/include_scan.hpp>
#include <tests/support/temp_dir.hpp>

using jitcache::client::nvrtc::IncludeScanInput;
using jitcache::client::nvrtc::scan_includes;
using jitcache::common::ErrorCode;
using jitcache::testing::TempDir;

namespace {

// The test's working directory for its lifetime.
class WorkingDirectory {
 public:
  explicit WorkingDirectory(const std::string& path) : m_previous(std::filesystem::current_path()) {
    std::filesystem::current_path(path);
  }
  ~WorkingDirectory() { std::filesystem::current_path(m_previous); }
  WorkingDirectory(const WorkingDirectory&) = delete;
  WorkingDirectory& operator=(const WorkingDirectory&) = delete;

 private:
  std::filesystem::path m_previous;
};

}  // namespace

TEST_CASE("nvrtc search places: a FIFO in the working directory stops only a quoted include of the source") {
  TempDir dir;
  std::filesystem::create_directories(dir.file("cwd"));
  std::filesystem::create_directories(dir.file("inc"));
  std::ofstream(dir.file("inc/b.h")) << "#pragma once\n";
  std::ofstream(dir.file("inc/outer.h")) << "#pragma once\n#include \"q.h\"\n";
  std::ofstream(dir.file("inc/q.h")) << "#pragma once\n";
  for (const char* planted : {"b.h", "q.h", "b.h.stdh"})
    REQUIRE(::mkfifo(dir.file("cwd/" + std::string(planted)).c_str(), 0600) == 0);
  const WorkingDirectory inside(dir.file("cwd"));
  const std::vector<std::string> include_paths{dir.file("inc")};

  for (const char* source : {"#include <b.h>\n", "#if __has_include(<q.h>)\n#endif\n", "#include <outer.h>\n"}) {
    INFO(source);
    auto record = scan_includes(IncludeScanInput{"kernel.cu", source, {}, include_paths, {}});
    REQUIRE(record);
    CHECK(record->text.find("\nb.h" + std::string(1, '\0')) == std::string::npos);
    CHECK(record->text.find("\nq.h" + std::string(1, '\0')) == std::string::npos);
  }
  auto quoted = scan_includes(IncludeScanInput{"kernel.cu", "#include \"q.h\"\n", {}, include_paths, {}});
  REQUIRE_FALSE(quoted);
  CHECK(quoted.error().code == ErrorCode::unsupported);
  CHECK_THAT(quoted.error().message, Catch::Contains("FIFO"));
}
