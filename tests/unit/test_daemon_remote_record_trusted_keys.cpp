// The trusted keys (daemon/remote/record/trusted_keys.hpp): remote_trusted_keys' files, each one
// public key, found by signer id.
#include <catch2/catch.hpp>

#include <string>

#include <proto/signing.hpp>

#include <daemon/remote/record/trusted_keys.hpp>

#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using namespace jitcache::daemon::remote;
using jitcache::testing::TempDir;

TEST_CASE("trusted keys: every file's key is found by its signer id, and no other key is") {
  TempDir dir;
  const auto a = proto::SigningKey::generate();
  const auto b = proto::SigningKey::generate();
  REQUIRE(a.write_pair(dir.file("a")).ok());
  REQUIRE(b.write_pair(dir.file("b")).ok());

  auto trusted = TrustedKeys::load({dir.file("a.pub"), dir.file("b.pub")});
  REQUIRE(trusted.ok());
  CHECK(trusted->keys().size() == 2);
  REQUIRE(trusted->find(a.public_key().id()) != nullptr);
  CHECK(trusted->find(a.public_key().id())->raw == a.public_key().raw);
  REQUIRE(trusted->find(b.public_key().id()) != nullptr);
  CHECK(trusted->find(b.public_key().id())->raw == b.public_key().raw);
  CHECK(trusted->find(proto::SigningKey::generate().public_key().id()) == nullptr);
  CHECK(trusted->find(proto::SignerId{}) == nullptr);
}

TEST_CASE("trusted keys: no files trust no key, and the same key named twice is trusted once") {
  auto none = TrustedKeys::load({});
  REQUIRE(none.ok());
  CHECK(none->empty());

  TempDir dir;
  const auto a = proto::SigningKey::generate();
  REQUIRE(a.write_pair(dir.file("a")).ok());
  testing::write_file(dir.file("copy.pub"), testing::read_file(dir.file("a.pub")));
  auto twice = TrustedKeys::load({dir.file("a.pub"), dir.file("copy.pub")});
  REQUIRE(twice.ok());
  CHECK(twice->keys().size() == 1);
}

TEST_CASE("trusted keys: a file that holds no ed25519 public key is an error naming it") {
  TempDir dir;
  const auto a = proto::SigningKey::generate();
  REQUIRE(a.write_pair(dir.file("a")).ok());
  testing::write_file(dir.file("bad.pub"), "not a key\n");

  auto bad = TrustedKeys::load({dir.file("a.pub"), dir.file("bad.pub")});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find(dir.file("bad.pub")) != std::string::npos);
  auto private_key = TrustedKeys::load({dir.file("a.key")});
  REQUIRE_FALSE(private_key.ok());
  CHECK(private_key.error().message.find("holds a private key") != std::string::npos);
  auto missing = TrustedKeys::load({dir.file("missing.pub")});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find(dir.file("missing.pub")) != std::string::npos);
}
