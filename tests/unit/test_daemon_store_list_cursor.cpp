// LIST cursors: a position survives the round trip, fits the protocol limit, and anything the
// store did not produce is rejected.
#include <catch2/catch.hpp>

#include <string>

#include <proto/digest.hpp>
#include <proto/messages.hpp>

#include <daemon/store/list_cursor.hpp>

using jitcache::daemon::store::decode_list_cursor;
using jitcache::daemon::store::encode_list_cursor;
using jitcache::daemon::store::ListPosition;

TEST_CASE("list cursor: a position round-trips within the protocol's cursor limit") {
  for (std::uint32_t ns : {0u, 1u, 1000u, 65534u, 0xFFFFFFFFu}) {
    ListPosition position;
    position.key_id = jitcache::proto::sha256(jitcache::proto::as_bytes("key " + std::to_string(ns)));
    position.namespace_id = ns;
    const std::string cursor = encode_list_cursor(position);
    CHECK(cursor.size() <= jitcache::proto::k_max_cursor_length);
    auto decoded = decode_list_cursor(cursor);
    REQUIRE(decoded.ok());
    CHECK(decoded->key_id == position.key_id);
    CHECK(decoded->namespace_id == ns);
  }
}

TEST_CASE("list cursor: strings the store never produced are invalid arguments") {
  const std::string good = encode_list_cursor(ListPosition{});
  for (const std::string& bad : {std::string(), std::string("garbage"), good.substr(1), good + "A",
                                 good.substr(0, 47) + "=", good.substr(0, 47) + "+", std::string(48, ' ')}) {
    INFO("\"" << bad << "\"");
    auto decoded = decode_list_cursor(bad);
    REQUIRE_FALSE(decoded.ok());
    CHECK(decoded.error().code == jitcache::common::ErrorCode::invalid_argument);
  }
}
