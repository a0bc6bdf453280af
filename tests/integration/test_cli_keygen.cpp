// `jitcache keygen` (docs/cli.md "keygen"): the real CLI makes a key pair the daemon's key loaders
// accept, says what to configure, and never overwrites a key.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <proto/signing.hpp>
#include <tests/support/child_process.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using jitcache::testing::TempDir;

namespace {

testing::ChildResult keygen(const std::vector<std::string>& args) {
  std::vector<std::string> argv{JITCACHE_CLI_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::run_child_captured(argv, {}, std::chrono::seconds(30));
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("cli keygen: writes a 0600 private key and its public key, and prints the signer id and config lines") {
  TempDir dir;
  const std::string prefix = dir.file("fleet");
  const auto run = keygen({"keygen", "--out", prefix});
  INFO(run.output << run.errors);
  REQUIRE(run.status == 0);

  struct stat st {};
  REQUIRE(::stat((prefix + ".key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto key = proto::SigningKey::load(prefix + ".key");
  REQUIRE(key.ok());
  auto public_key = proto::load_public_key(prefix + ".pub");
  REQUIRE(public_key.ok());
  CHECK(public_key->raw == key->public_key().raw);

  CHECK(contains(run.output, "signer id " + proto::signer_hex(public_key->id())));
  CHECK(contains(run.output, "remote_signing_key = \"" + prefix + ".key\""));
  CHECK(contains(run.output, "remote_trusted_keys = [\"" + prefix + ".pub\"]"));
}

TEST_CASE("cli keygen: --json prints the signer id and both paths") {
  TempDir dir;
  const auto run = keygen({"keygen", "--json", "--out", dir.file("k")});
  REQUIRE(run.status == 0);
  auto public_key = proto::load_public_key(dir.file("k.pub"));
  REQUIRE(public_key.ok());
  CHECK(contains(run.output, "\"signer_id\": \"" + proto::signer_hex(public_key->id()) + "\""));
  CHECK(contains(run.output, "\"private_key\": \"" + dir.file("k.key") + "\""));
  CHECK(contains(run.output, "\"public_key\": \"" + dir.file("k.pub") + "\""));
}

TEST_CASE("cli keygen: an existing key file is never overwritten (exit 5), and nothing else is written") {
  TempDir dir;
  const std::string prefix = dir.file("fleet");
  REQUIRE(keygen({"keygen", "--out", prefix}).status == 0);
  const std::string private_pem = testing::read_file(prefix + ".key");
  const std::string public_pem = testing::read_file(prefix + ".pub");

  const auto again = keygen({"keygen", "--out", prefix});
  CHECK(again.status == 5);
  CHECK(contains(again.errors, "jitcache: " + prefix + ".key already exists"));
  CHECK(again.output.empty());
  CHECK(testing::read_file(prefix + ".key") == private_pem);
  CHECK(testing::read_file(prefix + ".pub") == public_pem);

  // Only the public key there: refused too, and no private key is left behind.
  std::filesystem::remove(prefix + ".key");
  CHECK(keygen({"keygen", "--out", prefix}).status == 5);
  CHECK_FALSE(std::filesystem::exists(prefix + ".key"));
  CHECK(testing::read_file(prefix + ".pub") == public_pem);
}

TEST_CASE("cli keygen: no --out or a directory for it is a usage error, and a missing directory is exit 5") {
  TempDir dir;
  CHECK(keygen({"keygen"}).status == 2);
  const auto slash = keygen({"keygen", "--out", dir.path() + "/"});
  CHECK(slash.status == 2);
  CHECK(contains(slash.errors, "--out needs a file name prefix"));
  const auto missing = keygen({"keygen", "--out", dir.file("no/such/dir/k")});
  CHECK(missing.status == 5);
  CHECK(contains(missing.errors, "cannot create"));
}
