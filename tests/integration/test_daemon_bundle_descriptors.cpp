// IMPORT_BUNDLE's descriptor is the caller's to get right (PROTOCOL.md §5 IMPORT_BUNDLE: "a regular
// file open for reading"): a descriptor of a bundle file opened for writing only, or with O_PATH
// (which reads nothing), is the caller's mistake and is answered `bad_request` with the reason, not
// `internal`, which says the daemon failed (and which operators alert on, docs/operations.md).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include <common/unique_fd.hpp>
#include <proto/bundle_messages.hpp>
#include <proto/wire.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using testing::DaemonProcess;
using testing::TempDir;

TEST_CASE("bundles: an import from a descriptor that cannot be read is the caller's bad_request, not internal") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  auto client = daemon.client();
  const auto image = testing::sample_image(1, 3000);
  REQUIRE(client.put(testing::sample_put(1, image)));
  const std::string bundle = dir.file("entries.jcb");
  {
    common::UniqueFd out(::open(bundle.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    REQUIRE(out);
    REQUIRE(client.export_bundle(proto::ExportBundleRequest{}, out.get(), std::chrono::seconds(30)));
  }
  for (const int flags : {O_WRONLY, O_PATH}) {
    INFO("open flags " << flags);
    common::UniqueFd fd(::open(bundle.c_str(), flags | O_CLOEXEC));
    REQUIRE(fd);
    auto reply =
        client.import_bundle(proto::ImportBundleRequest{proto::ImportTarget::own}, fd.get(), std::chrono::seconds(30));
    REQUIRE_FALSE(reply);
    CHECK(reply.error().reply_status == static_cast<std::uint16_t>(proto::Status::bad_request));
    CHECK(reply.error().message.find("open for reading") != std::string::npos);
  }
  // The same file, opened for reading, imports.
  common::UniqueFd readable(::open(bundle.c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(readable);
  CHECK(client.import_bundle(proto::ImportBundleRequest{proto::ImportTarget::own}, readable.get(),
                             std::chrono::seconds(30)));
}
