// proto/explain_messages.hpp and proto/option_differences.hpp: EXPLAIN's and MISSES' payloads
// round-trip, refuse what is out of their tables and limits, and options differ option by option.
#include <catch2/catch.hpp>

#include <proto/explain_messages.hpp>
#include <proto/jit_options.hpp>
#include <proto/option_differences.hpp>

using namespace jitcache::proto;

namespace {

KeyFields sample_key() {
  KeyFields key;
  key.content = sha256(as_bytes("ptx"));
  key.arch = "sm_90";
  key.driver_api = 13000;
  key.driver_build = "580.159.04";
  key.options = default_option_text();
  return key;
}

ExplainReply sample_reply() {
  ExplainReply m;
  m.key_known = true;
  m.key = sample_key();
  m.key_id = key_id(m.key);
  ExplainFinding finding;
  finding.reason = ExplainReason::other_options;
  finding.key_id = sha256(as_bytes("other"));
  finding.namespace_id = 1000;
  finding.at_ms = 1'700'000'000'000;
  finding.differences = {{"option maxrreg", "0", "64"}};
  ExplainFinding quarantined;
  quarantined.reason = ExplainReason::quarantined;
  quarantined.cu_result = 200;
  quarantined.stage = static_cast<std::uint8_t>(FailureStage::load);
  quarantined.uid = 1001;
  quarantined.detail = "CUDA_ERROR_INVALID_IMAGE";
  m.findings = {finding, quarantined};
  return m;
}

}  // namespace

TEST_CASE("explain messages: requests and replies round-trip, by key and by key id") {
  const ExplainRequest by_key{ExplainSelector::key, sample_key(), {}};
  auto decoded = decode_explain_request(Bytes(encode(by_key)));
  REQUIRE(decoded);
  CHECK(decoded->key == sample_key());
  const ExplainRequest by_id{ExplainSelector::key_id, {}, key_id(sample_key())};
  decoded = decode_explain_request(Bytes(encode(by_id)));
  REQUIRE(decoded);
  CHECK(decoded->selector == ExplainSelector::key_id);
  CHECK(decoded->key_id == key_id(sample_key()));

  const ExplainReply reply = sample_reply();
  auto back = decode_explain_reply(Bytes(encode(reply)));
  REQUIRE(back);
  CHECK(back->key == reply.key);
  REQUIRE(back->findings.size() == 2);
  CHECK(back->findings[0].reason == ExplainReason::other_options);
  CHECK(back->findings[0].differences.at(0).found == "64");
  CHECK(back->findings[1].cu_result == 200);
  CHECK(back->findings[1].detail == "CUDA_ERROR_INVALID_IMAGE");
}

TEST_CASE("explain messages: a reason, selector or stage outside its table and a trailing byte are refused") {
  Payload request = encode(ExplainRequest{ExplainSelector::key_id, {}, key_id(sample_key())});
  request[0] = 2;
  CHECK_FALSE(decode_explain_request(Bytes(request)));
  request = encode(ExplainRequest{ExplainSelector::key_id, {}, key_id(sample_key())});
  request.push_back(0);
  CHECK_FALSE(decode_explain_request(Bytes(request)));

  ExplainReply reply = sample_reply();
  Payload bytes = encode(reply);
  bytes.push_back(0);
  CHECK_FALSE(decode_explain_reply(Bytes(bytes)));
  reply.findings[1].stage = 9;
  CHECK_FALSE(decode_explain_reply(Bytes(encode(reply))));
  reply = sample_reply();
  reply.findings.resize(1);
  bytes = encode(reply);
  // verdict, key_known, key, key_id, count, then the finding's reason
  const std::size_t reason_at =
      2 + (encode(ExplainRequest{ExplainSelector::key, sample_key(), {}}).size() - 1) + 32 + 1;
  REQUIRE(bytes[reason_at] == static_cast<std::uint8_t>(ExplainReason::other_options));
  bytes[reason_at] = 15;
  CHECK_FALSE(decode_explain_reply(Bytes(bytes)));
  for (std::size_t cut = 0; cut < encode(sample_reply()).size(); cut += 7) {
    const Payload whole = encode(sample_reply());
    CHECK_FALSE(decode_explain_reply(Bytes(whole.data(), cut)));
  }
}

TEST_CASE("explain messages: the encoder keeps replies within their limits") {
  ExplainReply reply = sample_reply();
  reply.findings.assign(k_max_explain_findings + 5, reply.findings[0]);
  reply.findings[0].differences.assign(k_max_explain_differences + 3, {"option x", std::string(300, 'a'), ""});
  auto back = decode_explain_reply(Bytes(encode(reply)));
  REQUIRE(back);
  CHECK(back->findings.size() == k_max_explain_findings);
  CHECK(back->findings[0].differences.size() == k_max_explain_differences);
  CHECK(back->findings[0].differences[0].asked.size() == k_max_explain_value_length);
}

TEST_CASE("misses messages: the limit is 1 to 256, and a reply of misses and evictions round-trips") {
  CHECK(decode_misses_request(Bytes(encode(MissesRequest{1}))));
  CHECK(decode_misses_request(Bytes(encode(MissesRequest{k_max_misses_listed}))));
  CHECK_FALSE(decode_misses_request(Bytes(encode(MissesRequest{0}))));
  CHECK_FALSE(decode_misses_request(Bytes(encode(MissesRequest{k_max_misses_listed + 1}))));

  MissesReply reply;
  MissRecord miss;
  miss.at_ms = 5;
  miss.uid = 1000;
  miss.op = Op::compile;
  miss.key = sample_key();
  miss.key_id = key_id(miss.key);
  reply.misses = {miss};
  EvictionRecord eviction;
  eviction.key = sample_key();
  eviction.cause = EvictionCause::stale_driver;
  reply.evictions = {eviction};
  auto back = decode_misses_reply(Bytes(encode(reply)));
  REQUIRE(back);
  CHECK(back->misses.at(0).op == Op::compile);
  CHECK(back->misses.at(0).key == sample_key());
  CHECK(back->evictions.at(0).cause == EvictionCause::stale_driver);

  reply.misses[0].op = Op::put;  // only LOOKUP and COMPILE miss
  CHECK_FALSE(decode_misses_reply(Bytes(encode(reply))));
  reply.misses[0].op = Op::lookup;
  reply.evictions[0].cause = EvictionCause::none;
  CHECK_FALSE(decode_misses_reply(Bytes(encode(reply))));
}

TEST_CASE("option differences: only the options whose values differ, each with both values") {
  const std::string defaults = default_option_text();
  CHECK(option_differences(defaults, defaults).empty());
  auto capped = canonicalize_option_text("maxrreg=64;opt=3");
  REQUIRE(capped);
  const auto differences = option_differences(defaults, *capped);
  REQUIRE(differences.size() == 2);
  CHECK(differences[0].option == "maxrreg");
  CHECK(differences[0].asked == "0");
  CHECK(differences[0].found == "64");
  CHECK(differences[1].option == "opt");
  CHECK(differences[1].asked == "4");
  CHECK(differences[1].found == "3");
  const auto link = option_differences(defaults, "link=cu;" + defaults);
  REQUIRE(link.size() == 1);
  CHECK(link[0].option == "link");
  CHECK(link[0].asked.empty());
  CHECK(link[0].found == "cu");
}
