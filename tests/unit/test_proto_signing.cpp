// ed25519 signing keys and their files (proto/signing.hpp, proto/signing_key_file.hpp).
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <proto/digest.hpp>
#include <proto/signing.hpp>
#include <proto/signing_key_file.hpp>
#include <tests/support/child_process.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

using namespace jitcache;
using jitcache::testing::TempDir;

namespace {

// A throwaway 1024-bit RSA key made for this test with `openssl genpkey -algorithm RSA`: the kind
// of PEM key an operator might name by mistake. It signs nothing.
constexpr const char* k_rsa_private_pem = R"(-----BEGIN PRIVATE KEY-----
MIICdwIBADANBgkqhkiG9w0BAQEFAASCAmEwggJdAgEAAoGBAM5rtbODDon0EU5U
vmOw5fDl8xrFolAb0utO0SEObUs11U+FU21kn9tTTop3UW7gbuuXmKO2IRv504zL
+avdWHzG/iCvvNWkeYTxPi8X+AbkXmDhizYzZ03BETIGbon/WrufACGpVfRcb/Od
okN4zzIG6hwoQF2JLTI+bmRzp+77AgMBAAECgYBHC1MyQX0Theke6JPOg+fgDYSq
RjMjFzB0xF+93NVI+XI9OEoKcIOEXRu/FGn2m1ARzc8/KUQj+MwSvXFk8X2udUh0
RVHdjXAMimghqmOVwRyjMP56GLu0Z8v/ncM6u+6F83NiZe/kMyo/5s0u1RG7F6ZM
jzAfb5GI2cq0RXKw4QJBAP72j8bjX02GovWjfWP3qHRjMc7eK3XNR8byaqLz5cKd
t7AyDfw14D8vQ5jiMqbnfjFmk2IowD5HmyZuc+BMmS0CQQDPQpyC6AxAjJ+sd7yd
j4HuTAjUR62jV1IR532YvoGQB5VGdB9If0ERsZpxSOwoeRC/khrNfAFagLX43Ji6
gHHHAkB6HGSoAOX4H2+U7gR0CH0poQiN52IxPWwPILNp8B4uo5MCVDbWgIcyO9TI
OC3COkT6LAKSlKneKjVopqXg207RAkEApu0APxKDY62eoHpjSAcf33wPlGESgT6/
07m81zuAAC+LU44M8AfFsWl4eQsBYOt4yMH0olDgijKl3QRWYcc3WwJBALOCl8gY
Uu5+gKk2N5lA8OtJFnF3lm7ojA72VoOafFaF2Y7Ayw6LIl/tj35cT2hP4iVcN8Db
EdhZUt3XA9uBzgo=
-----END PRIVATE KEY-----
)";
constexpr const char* k_rsa_public_pem = R"(-----BEGIN PUBLIC KEY-----
MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDOa7Wzgw6J9BFOVL5jsOXw5fMa
xaJQG9LrTtEhDm1LNdVPhVNtZJ/bU06Kd1Fu4G7rl5ijtiEb+dOMy/mr3Vh8xv4g
r7zVpHmE8T4vF/gG5F5g4Ys2M2dNwREyBm6J/1q7nwAhqVX0XG/znaJDeM8yBuoc
KEBdiS0yPm5kc6fu+wIDAQAB
-----END PUBLIC KEY-----
)";

// A file of mode `mode` whatever the umask.
void write_private_file(const std::string& path, const std::string& bytes, mode_t mode = 0600) {
  testing::write_file(path, bytes);
  REQUIRE(::chmod(path.c_str(), mode) == 0);
}

std::string flip_bit(std::string bytes, std::size_t bit) {
  bytes[bit / 8] = static_cast<char>(static_cast<unsigned char>(bytes[bit / 8]) ^ (1u << (bit % 8)));
  return bytes;
}

proto::Signature flip_bit(proto::Signature signature, std::size_t bit) {
  signature[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
  return signature;
}

std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    std::string candidate = dirs.substr(start, end - start) + "/" + name;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

testing::ChildResult run(const std::vector<std::string>& argv) {
  return testing::run_child_captured(argv, {}, std::chrono::seconds(30));
}

std::string error_of(const common::Result<proto::SigningKey>& result) {
  REQUIRE_FALSE(result.ok());
  return result.error().message;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("signing: a signature verifies under its key over exactly the message signed, and under no other key") {
  const auto key = proto::SigningKey::generate();
  const auto other = proto::SigningKey::generate();
  const std::string message = "jitcache remote index record v1 and some bytes\x01\x02";
  const proto::Signature signature = key.sign(message);

  CHECK(key.public_key().verifies(message, signature));
  CHECK_FALSE(other.public_key().verifies(message, signature));
  CHECK_FALSE(key.public_key().verifies(message.substr(1), signature));
  CHECK_FALSE(key.public_key().verifies(message + '\0', signature));
  for (const std::size_t bit : {std::size_t{0}, std::size_t{7}, message.size() * 4, message.size() * 8 - 1}) {
    CHECK_FALSE(key.public_key().verifies(flip_bit(message, bit), signature));
  }
  for (const std::size_t bit : {std::size_t{0}, std::size_t{255}, std::size_t{256}, std::size_t{511}}) {
    CHECK_FALSE(key.public_key().verifies(message, flip_bit(signature, bit)));
  }
  // ed25519 signatures are deterministic: the same key signs the same message the same way.
  CHECK(key.sign(message) == signature);
  CHECK(key.public_key().verifies("", key.sign("")));
}

TEST_CASE("signing: the signer id is the first 8 bytes of the SHA-256 of the raw public key") {
  const auto key = proto::SigningKey::generate();
  const proto::Digest256 digest = proto::sha256(proto::Bytes(key.public_key().raw));
  const proto::SignerId id = key.public_key().id();
  CHECK(std::equal(id.begin(), id.end(), digest.bytes.begin()));
  CHECK(proto::signer_hex(id) == proto::to_hex(digest).substr(0, 16));
  CHECK_FALSE(proto::SigningKey::generate().public_key().id() == id);
}

TEST_CASE("signing: write_pair writes a 0600 private key and a public key that load back as the same key") {
  TempDir dir;
  const auto key = proto::SigningKey::generate();
  REQUIRE(key.write_pair(dir.file("fleet")).ok());

  struct stat st {};
  REQUIRE(::stat(dir.file("fleet.key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(contains(testing::read_file(dir.file("fleet.key")), "-----BEGIN PRIVATE KEY-----"));
  CHECK(contains(testing::read_file(dir.file("fleet.pub")), "-----BEGIN PUBLIC KEY-----"));

  auto loaded = proto::SigningKey::load(dir.file("fleet.key"));
  REQUIRE(loaded.ok());
  CHECK(loaded->public_key().raw == key.public_key().raw);
  auto public_key = proto::load_public_key(dir.file("fleet.pub"));
  REQUIRE(public_key.ok());
  CHECK(public_key->raw == key.public_key().raw);
  CHECK(public_key->verifies("message", loaded->sign("message")));
}

TEST_CASE("signing: write_pair refuses to overwrite either file and leaves no partial pair") {
  TempDir dir;
  const auto key = proto::SigningKey::generate();

  SECTION("an existing private key") {
    testing::write_file(dir.file("a.key"), "mine");
    auto written = key.write_pair(dir.file("a"));
    REQUIRE_FALSE(written.ok());
    CHECK(contains(written.error().message, dir.file("a.key") + " already exists"));
    CHECK(testing::read_file(dir.file("a.key")) == "mine");
    CHECK_FALSE(std::filesystem::exists(dir.file("a.pub")));
  }
  SECTION("an existing public key: the private key just created is removed again") {
    testing::write_file(dir.file("b.pub"), "mine");
    auto written = key.write_pair(dir.file("b"));
    REQUIRE_FALSE(written.ok());
    CHECK(contains(written.error().message, dir.file("b.pub") + " already exists"));
    CHECK(testing::read_file(dir.file("b.pub")) == "mine");
    CHECK_FALSE(std::filesystem::exists(dir.file("b.key")));
  }
  SECTION("a symbolic link under the private key's name, even a dangling one, is not followed") {
    std::filesystem::create_symlink(dir.file("elsewhere"), dir.file("c.key"));
    REQUIRE_FALSE(key.write_pair(dir.file("c")).ok());
    CHECK_FALSE(std::filesystem::exists(dir.file("elsewhere")));
    CHECK_FALSE(std::filesystem::exists(dir.file("c.pub")));
  }
  SECTION("a directory that does not exist") {
    auto written = key.write_pair(dir.file("missing/d"));
    REQUIRE_FALSE(written.ok());
    CHECK(written.error().code == common::ErrorCode::io);
  }
}

TEST_CASE("signing: a private key the group or others may read or write is refused, saying chmod 600") {
  TempDir dir;
  REQUIRE(proto::SigningKey::generate().write_pair(dir.file("k")).ok());
  const std::string path = dir.file("k.key");
  for (const mode_t mode : {mode_t{0644}, mode_t{0640}, mode_t{0620}, mode_t{0604}, mode_t{0602}}) {
    REQUIRE(::chmod(path.c_str(), mode) == 0);
    auto loaded = proto::SigningKey::load(path);
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.error().code == common::ErrorCode::forbidden);
    CHECK(contains(loaded.error().message, "chmod 600 " + path));
  }
  REQUIRE(::chmod(path.c_str(), 0400) == 0);
  CHECK(proto::SigningKey::load(path).ok());
}

TEST_CASE("signing: a private key owned by another user is refused") {
  if (::geteuid() != 0) {
    JITCACHE_SKIP("needs root to give a file to another user (CI runs as root)");
  }
  TempDir dir;
  REQUIRE(proto::SigningKey::generate().write_pair(dir.file("k")).ok());
  const std::string path = dir.file("k.key");
  REQUIRE(::chown(path.c_str(), 65534, 65534) == 0);  // nobody
  auto loaded = proto::SigningKey::load(path);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.error().code == common::ErrorCode::forbidden);
  CHECK(contains(loaded.error().message, "owned by uid 65534"));
  // A public key is no secret: whoever owns it, it loads.
  REQUIRE(::chown(dir.file("k.pub").c_str(), 65534, 65534) == 0);
  CHECK(proto::load_public_key(dir.file("k.pub")).ok());
}

TEST_CASE("signing: a private key behind a symbolic link is refused, a public key behind one is read") {
  TempDir dir;
  REQUIRE(proto::SigningKey::generate().write_pair(dir.file("k")).ok());
  std::filesystem::create_symlink(dir.file("k.key"), dir.file("link.key"));
  std::filesystem::create_symlink(dir.file("k.pub"), dir.file("link.pub"));
  auto loaded = proto::SigningKey::load(dir.file("link.key"));
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.error().code == common::ErrorCode::forbidden);
  CHECK(contains(loaded.error().message, "symbolic link"));
  CHECK(proto::load_public_key(dir.file("link.pub")).ok());
}

TEST_CASE("signing: an RSA key is refused as a signing key and as a trusted key, naming its type") {
  TempDir dir;
  write_private_file(dir.file("rsa.key"), k_rsa_private_pem);
  testing::write_file(dir.file("rsa.pub"), k_rsa_public_pem);
  const std::string private_error = error_of(proto::SigningKey::load(dir.file("rsa.key")));
  CHECK(contains(private_error, "of type RSA"));
  CHECK(contains(private_error, "ed25519"));
  auto public_key = proto::load_public_key(dir.file("rsa.pub"));
  REQUIRE_FALSE(public_key.ok());
  CHECK(contains(public_key.error().message, "of type RSA"));
}

TEST_CASE("signing: garbage, an empty file, a key of the wrong half and files that are no key files are refused") {
  TempDir dir;
  REQUIRE(proto::SigningKey::generate().write_pair(dir.file("k")).ok());

  write_private_file(dir.file("garbage.key"),
                     "-----BEGIN PRIVATE KEY-----\nnot base64 at all\n-----END PRIVATE KEY-----\n");
  CHECK(contains(error_of(proto::SigningKey::load(dir.file("garbage.key"))), "holds no PEM private key"));
  write_private_file(dir.file("empty.key"), "");
  CHECK(contains(error_of(proto::SigningKey::load(dir.file("empty.key"))), "holds no PEM private key"));
  write_private_file(dir.file("public.key"), testing::read_file(dir.file("k.pub")));
  CHECK(contains(error_of(proto::SigningKey::load(dir.file("public.key"))), "holds a public key"));

  testing::write_file(dir.file("private.pub"), testing::read_file(dir.file("k.key")));
  auto swapped = proto::load_public_key(dir.file("private.pub"));
  REQUIRE_FALSE(swapped.ok());
  CHECK(contains(swapped.error().message, "holds a private key"));
  testing::write_file(dir.file("garbage.pub"), std::string(100, 'x'));
  CHECK_FALSE(proto::load_public_key(dir.file("garbage.pub")).ok());
  CHECK_FALSE(proto::load_public_key(dir.file("absent.pub")).ok());

  write_private_file(dir.file("big.key"), std::string(proto::k_max_key_file_bytes + 1, '\n'));
  auto big = proto::SigningKey::load(dir.file("big.key"));
  REQUIRE_FALSE(big.ok());
  CHECK(big.error().code == common::ErrorCode::too_large);

  // A FIFO under the key's name is refused at once rather than waited on.
  REQUIRE(::mkfifo(dir.file("fifo.key").c_str(), 0600) == 0);
  CHECK(contains(error_of(proto::SigningKey::load(dir.file("fifo.key"))), "not a regular file"));
  CHECK(contains(error_of(proto::SigningKey::load(dir.path())), "not a regular file"));
}

TEST_CASE("signing: keys made by openssl genpkey are read, and the openssl command verifies our signatures") {
  const std::string openssl = find_program("openssl");
  if (openssl.empty()) {
    JITCACHE_SKIP("no openssl command on PATH (Debian package openssl, scripts/install-deps)");
  }
  TempDir dir;
  const std::string key_path = dir.file("o.key");
  const std::string pub_path = dir.file("o.pub");
  REQUIRE(run({openssl, "genpkey", "-algorithm", "ed25519", "-out", key_path}).status == 0);
  REQUIRE(::chmod(key_path.c_str(), 0600) == 0);
  REQUIRE(run({openssl, "pkey", "-in", key_path, "-pubout", "-out", pub_path}).status == 0);

  auto key = proto::SigningKey::load(key_path);
  REQUIRE(key.ok());
  auto public_key = proto::load_public_key(pub_path);
  REQUIRE(public_key.ok());
  CHECK(public_key->raw == key->public_key().raw);

  // Our signature, checked by OpenSSL's own command: the same ed25519 (RFC 8032) as everyone's.
  const std::string message = "index record bytes";
  const proto::Signature signature = key->sign(message);
  testing::write_file(dir.file("message"), message);
  testing::write_file(dir.file("signature"), std::string(signature.begin(), signature.end()));
  const auto verified = run({openssl, "pkeyutl", "-verify", "-pubin", "-inkey", pub_path, "-rawin", "-in",
                             dir.file("message"), "-sigfile", dir.file("signature")});
  CHECK(verified.status == 0);
  testing::write_file(dir.file("message"), message + "!");
  CHECK(run({openssl, "pkeyutl", "-verify", "-pubin", "-inkey", pub_path, "-rawin", "-in", dir.file("message"),
             "-sigfile", dir.file("signature")})
            .status != 0);

  // An encrypted key is refused with a reason, without asking for a passphrase.
  const std::string encrypted = dir.file("encrypted.key");
  REQUIRE(run({openssl, "genpkey", "-algorithm", "ed25519", "-aes-256-cbc", "-pass", "pass:secret", "-out", encrypted})
              .status == 0);
  REQUIRE(::chmod(encrypted.c_str(), 0600) == 0);
  CHECK(contains(error_of(proto::SigningKey::load(encrypted)), "is encrypted"));
}
