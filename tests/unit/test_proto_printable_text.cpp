// Printable text (proto/printable_text.hpp) and the request field rules built on it
// (proto/request_fields.hpp): what the daemon accepts in producer, detail and client_name, and the
// compile_time_us bound.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include <proto/printable_text.hpp>
#include <proto/request_fields.hpp>

using namespace jitcache;

TEST_CASE(
    "printable text: ASCII, accents and other scripts are printable, controls, bidi controls and bad UTF-8 are not") {
  for (const std::string& text :
       {std::string(), std::string("nvJitLink 13.0"), std::string("driver 13000/580.159.04 (cuLink)"),
        std::string("Jos\xc3\xa9"), std::string("\xe6\x97\xa5\xe6\x9c\xac"), std::string("\xf0\x9f\x98\x80"),
        std::string("~ \\ \" '")}) {
    INFO(text);
    CHECK(proto::first_unprintable(text) == std::string::npos);
  }
  struct Case {
    std::string text;
    std::size_t offset;
  };
  for (const Case& c :
       {Case{"a\x1b[31m", 1}, Case{std::string("nul\0x", 5), 3}, Case{"tab\there", 3}, Case{"new\nline", 3},
        Case{"del\x7f", 3},
        Case{"c1 \xc2\x9b"
             "2J",
             3},
        Case{"nel \xc2\x85", 4}, Case{"rlo \xe2\x80\xae", 4}, Case{"lri \xe2\x81\xa6", 4}, Case{"alm \xd8\x9c", 4},
        Case{"stray \x80", 6}, Case{"cut \xe2\x80", 4}, Case{"overlong \xc0\xaf", 9},
        Case{"surrogate \xed\xa0\x80", 10}, Case{"too big \xf4\x90\x80\x80", 8}, Case{"\xff", 0}}) {
    INFO(c.text);
    CHECK(proto::first_unprintable(c.text) == c.offset);
  }
}

TEST_CASE("printable text: read_utf8 gives each sequence's code point and length, and one byte for an invalid one") {
  const std::string text = "a\xc3\xa9\xe2\x80\xae\xf0\x9f\x98\x80\xff";
  auto a = proto::read_utf8(text, 0);
  CHECK((a.valid && a.code_point == U'a' && a.length == 1));
  auto e = proto::read_utf8(text, 1);
  CHECK((e.valid && e.code_point == 0xE9 && e.length == 2));
  auto rlo = proto::read_utf8(text, 3);
  CHECK((rlo.valid && rlo.code_point == 0x202E && rlo.length == 3));
  CHECK_FALSE(proto::is_printable_code_point(rlo.code_point));
  auto smile = proto::read_utf8(text, 6);
  CHECK((smile.valid && smile.code_point == 0x1F600 && smile.length == 4));
  auto bad = proto::read_utf8(text, 10);
  CHECK((!bad.valid && bad.length == 1));
}

TEST_CASE("request fields: a refusal names the field and what is wrong, without echoing the text") {
  CHECK(proto::check_printable_field("producer", "nvJitLink 13.0"));
  auto escape = proto::check_printable_field("producer", "x\x1b]0;title\a");
  REQUIRE_FALSE(escape);
  CHECK(escape.error().code == common::ErrorCode::invalid_argument);
  CHECK_THAT(escape.error().message,
             Catch::Contains("producer is not printable text") && Catch::Contains("control character 0x1b at byte 1"));
  CHECK(escape.error().message.find('\x1b') == std::string::npos);
  CHECK(escape.error().message.find("title") == std::string::npos);
  auto bidi = proto::check_printable_field("detail", "ok \xe2\x80\xae");
  REQUIRE_FALSE(bidi);
  CHECK_THAT(bidi.error().message, Catch::Contains("detail") && Catch::Contains("U+202E at byte 3"));
  auto invalid = proto::check_printable_field("client_name", "\xfe");
  REQUIRE_FALSE(invalid);
  CHECK_THAT(invalid.error().message, Catch::Contains("invalid UTF-8 (byte 0xfe) at byte 0"));
}

TEST_CASE("request fields: compile_time_us may be anything up to 2^63 - 1, the store's signed 64-bit column") {
  CHECK(proto::check_compile_time_us(0));
  CHECK(proto::check_compile_time_us(std::numeric_limits<std::int64_t>::max()));
  for (const std::uint64_t value : {std::uint64_t{1} << 63, std::numeric_limits<std::uint64_t>::max()}) {
    auto refused = proto::check_compile_time_us(value);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == common::ErrorCode::invalid_argument);
    CHECK_THAT(refused.error().message, Catch::Contains("compile_time_us " + std::to_string(value)));
  }
}
