// The compile ask's value (docs/remote-layout.md "Asks"): what a consumer writes decodes to its key
// and PTX, and every way a writer of the queue could bend it is refused with the reason: a PTX that
// is not the digest the ask names, a key that fails a COMPILE's checks, a PTX over the limit,
// truncation, another version, extra length.
#include <catch2/catch.hpp>

#include <string>
#include <variant>

#include <proto/content_digest.hpp>
#include <proto/jit_options.hpp>
#include <proto/key.hpp>

#include <daemon/remote/compile_ask.hpp>

using namespace jitcache;
namespace remote = jitcache::daemon::remote;

namespace {

const std::string k_ptx = ".version 8.0\n.target sm_90\n.address_size 64\n// an ask's PTX\n";

proto::KeyFields key_for(const std::string& ptx) {
  proto::KeyFields key;
  key.content = proto::content_digest(proto::as_bytes(ptx));
  key.arch = "sm_90";
  key.driver_api = 13000;
  key.driver_build = "580.159.04";
  key.options = *proto::canonicalize_option_text("");
  return key;
}

std::string refusal(const std::string& value, std::uint64_t max_ptx = 1 << 20) {
  auto decoded = remote::decode_compile_ask(value, max_ptx);
  const auto* why = std::get_if<std::string>(&decoded);
  return why != nullptr ? *why : std::string();
}

}  // namespace

TEST_CASE("compile ask: what a consumer encodes decodes to the same key and PTX") {
  const proto::KeyFields key = key_for(k_ptx);
  const std::string value = remote::encode_compile_ask(key, proto::as_bytes(k_ptx));
  REQUIRE_FALSE(value.empty());
  auto decoded = remote::decode_compile_ask(value, 1 << 20);
  REQUIRE(std::holds_alternative<remote::CompileAsk>(decoded));
  const auto& ask = std::get<remote::CompileAsk>(decoded);
  CHECK(ask.key == key);
  CHECK(std::string(ask.ptx.begin(), ask.ptx.end()) == k_ptx);
}

TEST_CASE("compile ask: a PTX that is not the content digest the ask names is refused") {
  const proto::KeyFields key = key_for(k_ptx);
  const std::string other = k_ptx + "// something else\n";
  CHECK(refusal(remote::encode_compile_ask(key, proto::as_bytes(other))) ==
        "its PTX does not have the content digest the ask names");
}

TEST_CASE("compile ask: a key a COMPILE would refuse is refused") {
  proto::KeyFields key = key_for(k_ptx);
  key.options = "not canonical";
  CHECK_FALSE(refusal(remote::encode_compile_ask(key, proto::as_bytes(k_ptx))).empty());
  key = key_for(k_ptx);
  key.arch = "compute_90";
  CHECK_FALSE(refusal(remote::encode_compile_ask(key, proto::as_bytes(k_ptx))).empty());
  key = key_for(k_ptx);
  key.key_schema = proto::k_key_schema_version + 1;
  CHECK_FALSE(refusal(remote::encode_compile_ask(key, proto::as_bytes(k_ptx))).empty());
}

TEST_CASE("compile ask: a PTX over the reader's limit, truncation, junk and another version are refused") {
  const std::string value = remote::encode_compile_ask(key_for(k_ptx), proto::as_bytes(k_ptx));
  CHECK(refusal(value, k_ptx.size() - 1).starts_with("its PTX is not one zstd frame of at most"));
  for (std::size_t cut = 0; cut < value.size(); cut += 7) {
    INFO("cut at " << cut);
    CHECK_FALSE(refusal(value.substr(0, cut)).empty());
  }
  CHECK_FALSE(refusal(value + "x").empty());
  CHECK(refusal("junk") == "not an ask");
  std::string other_version = value;
  other_version[4] = 2;
  CHECK(refusal(other_version) == "not an ask of version 1");
  CHECK(refusal(std::string(remote::k_max_compile_ask_bytes + 1, 'x')) == "longer than an ask may be");
}

TEST_CASE("compile ask: an ask longer than the cap is not encoded") {
  // Incompressible bytes: their zstd frame is as long as they are.
  std::string noise(remote::k_max_compile_ask_bytes, '\0');
  std::uint64_t state = 88172645463325252ull;
  for (char& c : noise) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    c = static_cast<char>(state);
  }
  CHECK(remote::encode_compile_ask(key_for(noise), proto::as_bytes(noise)).empty());
}
