// REPORT_FAILURE (op 9) against the real jitcached: a client that could not load a served image
// reports it, the entry is quarantined for everyone, and a rebuilt image PUT under the same key is
// served again. Checked through the replies and the STATS counters.
#include <catch2/catch.hpp>

#include <string>

#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using testing::DaemonProcess;
using testing::stat_value;
using testing::TempDir;

namespace {

proto::ReportFailureRequest report_for(std::uint64_t seed) {
  proto::ReportFailureRequest request;
  request.key = testing::sample_key(seed);
  request.cu_result = 209;  // CUDA_ERROR_NO_BINARY_FOR_GPU
  request.stage = proto::FailureStage::image;
  request.detail = "no kernel image is available for execution on the device";
  return request;
}

}  // namespace

TEST_CASE("report failure: a reported entry misses until a PUT replaces it, and the counters follow") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  auto client = daemon.client();

  auto hello = client.hello("test_daemon_report_failure");
  REQUIRE(hello);
  CHECK((hello->capabilities & proto::k_capability_report_failure) != 0);

  const auto image = testing::sample_image(1, 4096);
  auto put = client.put(testing::sample_put(1, image));
  REQUIRE(put);
  auto hit = client.lookup(testing::sample_key(1));
  REQUIRE(hit);
  REQUIRE(hit->has_value());
  CHECK((*hit)->info.quarantined_at_ms == 0);

  auto first = client.report_failure(report_for(1));
  INFO((first ? std::string() : first.error().message));
  REQUIRE(first);
  REQUIRE(first->has_value());
  CHECK((*first)->outcome == proto::ReportFailureOutcome::quarantined);
  CHECK((*first)->namespace_id == put->namespace_id);

  auto miss = client.lookup(testing::sample_key(1));
  REQUIRE(miss);
  CHECK_FALSE(miss->has_value());
  auto miss_by_id = client.lookup_by_id(proto::to_hex(put->key_id).substr(0, 16));
  REQUIRE(miss_by_id);
  CHECK_FALSE(miss_by_id->has_value());

  proto::ListRequest list;
  auto listed = client.list(list);
  REQUIRE(listed);
  REQUIRE(listed->entries.size() == 1);
  CHECK(listed->entries[0].quarantined_at_ms > 0);

  auto second = client.report_failure(report_for(1));
  REQUIRE(second);
  REQUIRE(second->has_value());
  CHECK((*second)->outcome == proto::ReportFailureOutcome::already_quarantined);

  auto unknown = client.report_failure(report_for(2));
  REQUIRE(unknown);
  CHECK_FALSE(unknown->has_value());

  CHECK(stat_value(client, "failure_reports") == 3);
  CHECK(stat_value(client, "quarantines") == 1);
  CHECK(stat_value(client, "entries_quarantined") == 1);
  CHECK(stat_value(client, "entries") == 1);
  CHECK(stat_value(client, "hits") == 1);
  CHECK(stat_value(client, "misses") == 2);
  CHECK(stat_value(client, "errors.not_found") == 3);  // two misses and the unknown key

  const auto rebuilt = testing::sample_image(2, 5000);
  auto put_again = client.put(testing::sample_put(1, rebuilt));
  REQUIRE(put_again);
  CHECK(put_again->replaced);
  auto hit_again = client.lookup(testing::sample_key(1));
  REQUIRE(hit_again);
  REQUIRE(hit_again->has_value());
  CHECK((*hit_again)->image == rebuilt);
  CHECK((*hit_again)->info.quarantined_at_ms == 0);
  CHECK(stat_value(client, "entries_quarantined") == 0);
  CHECK(stat_value(client, "hits") == 2);
}

TEST_CASE("report failure: the quarantine survives a daemon restart") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  {
    auto client = daemon.client();
    REQUIRE(client.put(testing::sample_put(3, testing::sample_image(3, 100))));
    auto reported = client.report_failure(report_for(3));
    REQUIRE(reported);
    REQUIRE(reported->has_value());
  }
  REQUIRE(daemon.stop() == 0);
  daemon.start();
  auto client = daemon.client();
  auto miss = client.lookup(testing::sample_key(3));
  REQUIRE(miss);
  CHECK_FALSE(miss->has_value());
  CHECK(stat_value(client, "entries_quarantined") == 1);
  auto again = client.report_failure(report_for(3));
  REQUIRE(again);
  REQUIRE(again->has_value());
  CHECK((*again)->outcome == proto::ReportFailureOutcome::already_quarantined);
}

TEST_CASE("report failure: a malformed report gets bad_request naming the field, and the connection stays") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  auto client = daemon.client();

  proto::ReportFailureRequest no_result = report_for(4);
  no_result.cu_result = 0;
  auto refused = client.report_failure(no_result);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().reply_status == static_cast<std::uint16_t>(proto::Status::bad_request));
  CHECK_THAT(refused.error().message, Catch::Contains("cu_result 0"));

  proto::ReportFailureRequest bad_key = report_for(4);
  bad_key.key.driver_api = 0;
  auto refused_key = client.report_failure(bad_key);
  REQUIRE_FALSE(refused_key);
  CHECK(refused_key.error().reply_status == static_cast<std::uint16_t>(proto::Status::bad_request));
  CHECK_THAT(refused_key.error().message, Catch::Contains("driver_api"));

  CHECK(client.ping());
  CHECK(stat_value(client, "failure_reports") == 0);
  CHECK(stat_value(client, "errors.bad_request") == 2);
}
