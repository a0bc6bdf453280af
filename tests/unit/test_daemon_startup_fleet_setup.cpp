// The `remote` list: commas separate URLs and a cluster URL's seeds alike.
#include <catch2/catch.hpp>

#include <daemon/startup/fleet_setup.hpp>

using jitcache::daemon::startup::split_remote_urls;

TEST_CASE("fleet setup: a remote list splits into its URLs, a cluster URL keeping its seeds") {
  auto urls = split_remote_urls("redis://a:6379/0, redis+cluster://b:7000,c:7001,d:7002 ,https://cache/jc");
  REQUIRE(urls.ok());
  REQUIRE(urls->size() == 3);
  CHECK((*urls)[0] == "redis://a:6379/0");
  CHECK((*urls)[1] == "redis+cluster://b:7000,c:7001,d:7002");
  CHECK((*urls)[2] == "https://cache/jc");
}

TEST_CASE("fleet setup: a seed after a URL that is not a cluster's is an error") {
  auto urls = split_remote_urls("redis://a:6379/0,b:7000");
  REQUIRE_FALSE(urls.ok());
  CHECK_THAT(urls.error().message, Catch::Contains("b:7000"));
}

TEST_CASE("fleet setup: an empty list is no remote") {
  auto urls = split_remote_urls("");
  REQUIRE(urls.ok());
  CHECK(urls->empty());
}
