// The `remote` list: commas separate URLs and a cluster URL's seeds alike; the password file.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include <daemon/startup/fleet_setup.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

using jitcache::daemon::startup::read_remote_password;
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

TEST_CASE("fleet setup: a password file the daemon's user may not open is named with the reason and that uid") {
  if (::geteuid() != 0) {
    JITCACHE_SKIP("reading as another uid needs root (CI runs as root)");
  }
  jitcache::testing::TempDir dir("jitcache-password");
  ::chmod(dir.path().c_str(), 0755);
  // Made as root, 0600, "not readable by others": what an administrator writes first.
  const std::string path = dir.file("remote-password");
  {
    std::ofstream out(path);
    out << "secret\n";
  }
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  REQUIRE(read_remote_password(path).ok());
  REQUIRE(::seteuid(4242) == 0);
  auto refused = read_remote_password(path);
  REQUIRE(::seteuid(0) == 0);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("cannot open it: Permission denied"));
  CHECK_THAT(refused.error().message, Catch::Contains("jitcached runs as uid 4242"));
  CHECK_THAT(refused.error().message, Catch::Contains("must belong to the daemon's user"));
}
