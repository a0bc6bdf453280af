// The client's environment table (common/client_environment.hpp): the flag rule every part applies,
// and docs/configuration.md "Client environment", generated from the table.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <string>

#include <common/client_environment.hpp>

using jitcache::common::client_environment_markdown;
using jitcache::common::flag_value;

TEST_CASE("client environment: docs/configuration.md lists exactly the table") {
  std::ifstream in(std::string(JITCACHE_SOURCE_DIR) + "/docs/configuration.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE_FALSE(doc.empty());
  CHECK_THAT(doc, Catch::Contains(client_environment_markdown()));
}

TEST_CASE("client environment: a flag is off for 0, false, no, off and empty, on for anything else") {
  for (const char* off : {"0", "false", "FALSE", "No", "off", "OFF"}) {
    INFO(off);
    CHECK_FALSE(flag_value(off, true));
  }
  for (const char* on : {"1", "true", "Yes", "ON", "maybe", "2"}) {
    INFO(on);
    CHECK(flag_value(on, false));
  }
  CHECK_FALSE(flag_value("", false));
  CHECK(flag_value("", true));
  CHECK(flag_value(nullptr, true));
  CHECK_FALSE(flag_value(nullptr, false));
}
