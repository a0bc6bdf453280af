// The Redis Cluster hash slot (daemon/remote/redis/hash_slot.hpp) against the Cluster
// specification's own examples (CRC16 of "123456789" is 0x31C3; the hash tag rules), and the key
// names of remote keys (daemon/remote/redis/redis_key.hpp): every space of one id in one slot.
#include <catch2/catch.hpp>

#include <string>

#include <daemon/remote/redis/hash_slot.hpp>
#include <daemon/remote/redis/redis_key.hpp>

using jitcache::common::ErrorCode;
using jitcache::daemon::remote::crc16_xmodem;
using jitcache::daemon::remote::hash_tag;
using jitcache::daemon::remote::key_hash_slot;
using jitcache::daemon::remote::redis_key_name;
using jitcache::daemon::remote::RemoteKey;

TEST_CASE("redis hash slot: CRC16 is the XMODEM variant the Cluster specification names") {
  CHECK(crc16_xmodem("123456789") == 0x31C3);
  CHECK(crc16_xmodem("") == 0);
  CHECK(crc16_xmodem("A") == 0x58E5);
  CHECK(key_hash_slot("123456789") == 0x31C3 % 16384);
  // As redis-server's CLUSTER KEYSLOT answers.
  CHECK(key_hash_slot("foo") == 12182);
  CHECK(key_hash_slot("bar") == 5061);
  CHECK(key_hash_slot("hello") == 866);
}

TEST_CASE("redis hash slot: the hash tag rules of the specification") {
  CHECK(hash_tag("{user1000}.following") == "user1000");
  CHECK(key_hash_slot("{user1000}.following") == key_hash_slot("{user1000}.followers"));
  CHECK(key_hash_slot("{user1000}.following") == key_hash_slot("user1000"));
  CHECK(hash_tag("foo{}{bar}") == "foo{}{bar}");  // an empty first tag: the whole key
  CHECK(hash_tag("foo{{bar}}zap") == "{bar");     // from the first '{' to the first '}' after it
  CHECK(hash_tag("foo{bar}{zap}") == "bar");      // only the first tag
  CHECK(hash_tag("no braces") == "no braces");
  CHECK(hash_tag("open{only") == "open{only");
  CHECK(hash_tag("close}only{") == "close}only{");
  CHECK(key_hash_slot("foo{bar}{zap}") == key_hash_slot("bar"));
  CHECK(key_hash_slot("foo{{bar}}zap") == key_hash_slot("{bar"));
}

TEST_CASE("redis key: a remote key is <prefix><space>:{<id>}, and all spaces of an id share its slot") {
  const std::string id = "3f2a9c0d5e6b7a8190cdef0123456789abcdef0123456789abcdef0123456789";
  const auto idx = redis_key_name("jitcache:", RemoteKey{"idx", id});
  const auto lease = redis_key_name("jitcache:", RemoteKey{"lease", id});
  REQUIRE(idx);
  REQUIRE(lease);
  CHECK(*idx == "jitcache:idx:{" + id + "}");
  CHECK(*lease == "jitcache:lease:{" + id + "}");
  CHECK(key_hash_slot(*idx) == key_hash_slot(*lease));
  CHECK(key_hash_slot(*idx) == key_hash_slot(id));
  CHECK(*redis_key_name("ci/a:", RemoteKey{"probe", "host-1.example_2"}) == "ci/a:probe:{host-1.example_2}");
}

TEST_CASE("redis key: a space or id that could move the hash tag or escape the prefix is refused") {
  for (const auto& key : {RemoteKey{"idx", "a}b"}, RemoteKey{"idx", "{a}"}, RemoteKey{"idx", ""},
                          RemoteKey{"idx", "a b"}, RemoteKey{"idx", "a*"}, RemoteKey{"IDX", "a"}, RemoteKey{"", "a"},
                          RemoteKey{"i:x", "a"}, RemoteKey{"idx", std::string_view("a\0b", 3)}}) {
    const auto name = redis_key_name("jitcache:", key);
    REQUIRE_FALSE(name);
    CHECK(name.error().code == ErrorCode::invalid_argument);
  }
  CHECK_FALSE(redis_key_name("p:", RemoteKey{"idx", std::string(129, 'a')}));
  CHECK(redis_key_name("p:", RemoteKey{"idx", std::string(128, 'a')}));
}
