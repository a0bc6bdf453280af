// The free fields of requests against the real jitcached (PROTOCOL.md §4 "Field rules"): text that
// the daemon stores or shows (PUT's producer, REPORT_FAILURE's detail, HELLO's client_name) must be
// printable, and PUT's compile_time_us must fit the store. A violation is bad_request naming the
// field, nothing is stored, and the connection goes on serving; a total that sums client values
// (compile_microseconds_saved) stops at its maximum instead of wrapping.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include <proto/request_fields.hpp>

#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using testing::DaemonProcess;
using testing::stat_value;
using testing::TempDir;

namespace {

constexpr auto k_bad_request = static_cast<std::uint16_t>(proto::Status::bad_request);

template <class T>
void check_refused(const common::Result<T>& result, const std::string& field) {
  REQUIRE_FALSE(result);
  INFO(result.error().message);
  CHECK(result.error().reply_status == k_bad_request);
  CHECK_THAT(result.error().message, Catch::Contains(field));
}

}  // namespace

TEST_CASE("request fields: a PUT whose producer is not printable text is bad_request and stores nothing") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  auto client = daemon.client();
  const auto image = testing::sample_image(1, 2048);

  for (const std::string& producer : {std::string("nvJitLink \x1b[31mred\x1b[0m"), std::string("bell\a"),
                                      std::string("csi \xc2\x9b"
                                                  "2J"),
                                      std::string("rtl \xe2\x80\xae"
                                                  "txt"),
                                      std::string("bad utf-8 \xff"), std::string("line\nbreak")}) {
    INFO("producer " << producer);
    auto request = testing::sample_put(1, image);
    request.producer = producer;
    check_refused(client.put(request), "producer is not printable text");
  }
  CHECK(stat_value(client, "puts") == 0);
  CHECK(stat_value(client, "entries") == 0);
  CHECK(stat_value(client, "errors.bad_request") == 6);

  // Printable text, accents included, is stored as sent; the same connection still serves.
  auto request = testing::sample_put(1, image);
  request.producer = "nvJitLink 13.0 (José's build)";
  REQUIRE(client.put(request));
  auto hit = client.lookup(testing::sample_key(1));
  REQUIRE(hit);
  REQUIRE(hit->has_value());
  CHECK((*hit)->info.producer == "nvJitLink 13.0 (José's build)");
}

TEST_CASE("request fields: a failure report's detail and a HELLO's client name must be printable text") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  auto client = daemon.client();
  const auto image = testing::sample_image(2, 1024);
  REQUIRE(client.put(testing::sample_put(2, image)));

  proto::ReportFailureRequest report;
  report.key = testing::sample_key(2);
  report.cu_result = 209;
  report.stage = proto::FailureStage::image;
  report.detail = "\x1b]0;owned\a";
  check_refused(client.report_failure(report), "detail is not printable text");
  CHECK(stat_value(client, "failure_reports") == 0);
  auto still_live = client.lookup(testing::sample_key(2));
  REQUIRE(still_live);
  CHECK(still_live->has_value());

  check_refused(client.hello("tool\x1b[2J"), "client_name is not printable text");
  CHECK(client.hello("test_daemon_request_fields"));
}

TEST_CASE("request fields: compile_time_us above 2^63 - 1 is bad_request, and the time saved stops at 2^64 - 1") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  auto client = daemon.client();
  const auto image = testing::sample_image(3, 1024);

  auto too_long = testing::sample_put(3, image);
  for (const std::uint64_t value : {std::uint64_t{1} << 63, std::numeric_limits<std::uint64_t>::max()}) {
    too_long.compile_time_us = value;
    check_refused(client.put(too_long), "compile_time_us");
  }
  CHECK(stat_value(client, "errors.internal") == 0);
  CHECK(stat_value(client, "entries") == 0);

  auto longest = testing::sample_put(3, image);
  longest.compile_time_us = proto::k_max_compile_time_us;
  REQUIRE(client.put(longest));
  // Three hits would sum to 3 * (2^63 - 1), which wraps to 2^63 - 3 in 64 bits.
  for (int i = 0; i < 3; ++i) {
    auto hit = client.lookup(testing::sample_key(3));
    REQUIRE(hit);
    REQUIRE(hit->has_value());
    CHECK((*hit)->info.compile_time_us == proto::k_max_compile_time_us);
  }
  CHECK(stat_value(client, "compile_microseconds_saved") == std::numeric_limits<std::uint64_t>::max());
}
