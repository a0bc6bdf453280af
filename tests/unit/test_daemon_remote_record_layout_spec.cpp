// docs/remote-layout.md against the code: the index record's table is the order, types and limits
// of the bytes encode_record_body writes; the record's longest length, the domain string and the
// table of rejection reasons are the code's.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <proto/byte_io.hpp>
#include <proto/key.hpp>
#include <proto/signing.hpp>

#include <daemon/remote/record/index_record_codec.hpp>
#include <daemon/remote/record/rejection.hpp>

#include <tests/support/markdown_tables.hpp>
#include <tests/support/remote_records.hpp>

using namespace jitcache;
using namespace jitcache::daemon::remote;
using jitcache::testing::markdown_table_after;

namespace {

const std::string& layout_md() {
  static const std::string text = [] {
    std::ifstream in(std::string(JITCACHE_SOURCE_DIR) + "/docs/remote-layout.md");
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
  }();
  return text;
}

// What each field of the table encodes to, written here field by field with the same primitives
// as the wire protocol, independently of encode_record_body's order.
std::map<std::string, std::string> field_bytes(const IndexRecord& r, const proto::Signature& signature) {
  const auto encoded = [](auto&& write) {
    std::vector<std::uint8_t> bytes;
    proto::ByteWriter writer(bytes);
    write(writer);
    return std::string(bytes.begin(), bytes.end());
  };
  using W = proto::ByteWriter;
  return {
      {"magic", "JCIR"},
      {"version", encoded([](W& w) { w.u16(1); })},
      {"key_schema", encoded([&](W& w) { w.u16(r.key.key_schema); })},
      {"content", encoded([&](W& w) { w.digest(r.key.content); })},
      {"arch", encoded([&](W& w) { w.str16(r.key.arch); })},
      {"driver_api", encoded([&](W& w) { w.u32(r.key.driver_api); })},
      {"driver_build", encoded([&](W& w) { w.str16(r.key.driver_build); })},
      {"options", encoded([&](W& w) { w.str16(r.key.options); })},
      {"content_fast", encoded([&](W& w) { w.checksum(r.content_fast); })},
      {"image_digest", encoded([&](W& w) { w.digest(r.image_digest); })},
      {"image_size", encoded([&](W& w) { w.u64(r.image_size); })},
      {"object_size", encoded([&](W& w) { w.u64(r.object_size); })},
      {"producer", encoded([&](W& w) { w.str16(r.producer); })},
      {"compile_time_us", encoded([&](W& w) { w.u64(r.compile_time_us); })},
      {"created_at_ms", encoded([&](W& w) { w.i64(r.created_at_ms); })},
      {"host", encoded([&](W& w) { w.str16(r.host); })},
      {"signer", std::string(r.signer.begin(), r.signer.end())},
      {"signature", std::string(signature.begin(), signature.end())},
  };
}

// How many bytes a field of `type` takes at `at` of `bytes`.
std::size_t field_length(const std::string& type, const std::string& bytes, std::size_t at) {
  static const std::map<std::string, std::size_t> fixed{{"u16", 2}, {"u32", 4},     {"u64", 8},
                                                        {"i64", 8}, {"digest", 32}, {"checksum", 16}};
  if (const auto it = fixed.find(type); it != fixed.end()) return it->second;
  std::smatch raw;
  if (std::regex_match(type, raw, std::regex(R"(bytes\[(\d+)\])"))) return std::stoul(raw[1]);
  REQUIRE(type == "str16");
  REQUIRE(at + 2 <= bytes.size());
  return 2 + (static_cast<std::uint8_t>(bytes[at]) |
              (static_cast<std::size_t>(static_cast<std::uint8_t>(bytes[at + 1])) << 8));
}

}  // namespace

TEST_CASE("remote layout spec: the index record table is the order, types and bytes of an encoded record") {
  const proto::SigningKey key = proto::SigningKey::generate();
  const testing::RemoteEntry entry = testing::sample_remote_entry(1);
  const std::string bytes = testing::signed_record(entry, key);
  IndexRecord record = entry.record;
  record.signer = key.public_key().id();
  const auto expected = field_bytes(record, testing::signature_of(bytes));

  const auto rows = markdown_table_after(layout_md(), "Index record");
  REQUIRE(rows.size() == expected.size());
  std::size_t at = 0;
  for (const auto& row : rows) {
    REQUIRE(row.size() == 3);
    INFO("field " << row[0] << " (" << row[1] << ") at byte " << at);
    REQUIRE(expected.count(row[0]) == 1);
    const std::size_t length = field_length(row[1], bytes, at);
    REQUIRE(at + length <= bytes.size());
    CHECK(bytes.substr(at, length) == expected.at(row[0]));
    at += length;
  }
  CHECK(at == bytes.size());
}

TEST_CASE("remote layout spec: the text limits of the table are the parser's") {
  const std::map<std::string, std::size_t> limits{{"arch", proto::k_max_arch_length},
                                                  {"driver_build", proto::k_max_driver_build_length},
                                                  {"options", proto::k_max_options_length},
                                                  {"producer", k_max_record_text_length},
                                                  {"host", k_max_record_text_length}};
  std::size_t checked = 0;
  for (const auto& row : markdown_table_after(layout_md(), "Index record")) {
    if (row.at(1) != "str16") continue;
    INFO("field " << row[0]);
    std::smatch limit;
    REQUIRE(std::regex_search(row[2], limit, std::regex(R"(≤ (\d+) bytes, printable)")));
    REQUIRE(limits.count(row[0]) == 1);
    CHECK(std::stoul(limit[1]) == limits.at(row[0]));
    ++checked;
  }
  CHECK(checked == limits.size());
}

TEST_CASE("remote layout spec: the longest record, the domain string and the magic are the code's") {
  CHECK(layout_md().find("The longest record is " + std::to_string(k_max_index_record_bytes) + " bytes") !=
        std::string::npos);
  CHECK(layout_md().find("1. The record is at most " + std::to_string(k_max_index_record_bytes) + " bytes") !=
        std::string::npos);
  const std::string domain(k_index_record_domain.substr(0, k_index_record_domain.size() - 1));
  CHECK(layout_md().find("\"" + domain + "\" 00      (" + std::to_string(k_index_record_domain.size()) + " bytes") !=
        std::string::npos);
  CHECK(k_index_record_magic == "JCIR");
  CHECK(k_index_record_version == 1);
}

TEST_CASE("remote layout spec: the table of rejection reasons has every reason of rejection.hpp, numbered alike") {
  const auto rows = markdown_table_after(layout_md(), "Checks on read");
  REQUIRE(rows.size() == k_rejection_count);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFO("row " << i);
    CHECK(rows[i].at(0) == std::to_string(i));
    CHECK(rows[i].at(1) == k_rejection_names[i]);
    CHECK(rejection_name(static_cast<Rejection>(i)) == k_rejection_names[i]);
  }
}
