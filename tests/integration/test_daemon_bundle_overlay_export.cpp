// The daemon never writes a bundle into a file whose pages are memory (docs/security.md "Bundles",
// common/memory_backed_file.hpp). An overlay file system whose upper layer is a tmpfs is such a file,
// and any user can make one: an unprivileged user namespace may mount both (Linux 5.11 and later),
// and a socket path outside it still reaches the daemon, which sees the caller's real uid. fstatfs
// of an overlay file names overlayfs, not tmpfs, so the overlay is refused as the tmpfs under it
// would be; the CLI then has the daemon write into a pipe and writes the file itself, at its own
// cost, as it does for tmpfs. Mounted here by root (CAP_SYS_ADMIN, as tmpfs_mount.hpp); where
// mounting is not permitted the test skips visibly.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>

#include <common/unique_fd.hpp>
#include <proto/bundle_messages.hpp>
#include <proto/wire.hpp>
#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>
#include <tests/support/tmpfs_mount.hpp>

using namespace jitcache;
using testing::DaemonProcess;
using testing::TempDir;

namespace {

// An overlay on `top` whose layers live in the tmpfs `base`; unmounted when it dies.
struct OverlayOnTmpfs {
  std::string top;
  std::string error;
  bool mounted = false;
  explicit OverlayOnTmpfs(const std::string& base) : top(base + "/merged") {
    for (const char* part : {"/lower", "/upper", "/work", "/merged"}) std::filesystem::create_directories(base + part);
    const std::string options = "lowerdir=" + base + "/lower,upperdir=" + base + "/upper,workdir=" + base + "/work";
    mounted = ::mount("overlay", top.c_str(), "overlay", 0, options.c_str()) == 0;
    if (!mounted) error = std::string("cannot mount an overlay: ") + std::strerror(errno);
  }
  ~OverlayOnTmpfs() {
    if (mounted) ::umount2(top.c_str(), MNT_DETACH);
  }
};

}  // namespace

TEST_CASE("bundles: an export into an overlay file on tmpfs is refused by the daemon, and the CLI writes it itself") {
  TempDir dir;
  testing::TmpfsMount tmpfs(dir.file("tmpfs"), "16m");
  if (!tmpfs.mounted()) {
    JITCACHE_SKIP(tmpfs.error());
  }
  OverlayOnTmpfs overlay(dir.file("tmpfs"));
  if (!overlay.mounted) {
    JITCACHE_SKIP(overlay.error);
  }
  TempDir state;
  DaemonProcess daemon(state);
  daemon.start();
  auto client = daemon.client();
  REQUIRE(client.put(testing::sample_put(1, testing::sample_image(1, 3000))));

  const std::string target = overlay.top + "/out.jcb";
  {
    common::UniqueFd file(::open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    REQUIRE(file);
    auto exported = client.export_bundle(proto::ExportBundleRequest{}, file.get(), std::chrono::seconds(30));
    REQUIRE_FALSE(exported);
    CHECK(exported.error().reply_status == static_cast<std::uint16_t>(proto::Status::bad_request));
    CHECK(std::filesystem::file_size(target) == 0);
  }
  const testing::ChildResult cli =
      testing::run_child_captured({JITCACHE_CLI_PATH, "export", "-o", target},
                                  {{"JITCACHE_SOCKET", daemon.socket_path()}}, std::chrono::seconds(60));
  INFO(cli.output << cli.errors);
  CHECK(cli.status == 0);
  CHECK(std::filesystem::file_size(target) > 0);
}
