// The COMPILE payloads (proto/compile_messages.hpp): each round-trips byte for byte, and the
// decoders refuse what PROTOCOL.md §5 COMPILE forbids (a priority or origin outside the table, a log
// over its limit, bytes left over).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <proto/compile_messages.hpp>
#include <proto/jit_options.hpp>

using namespace jitcache::proto;
using namespace jitcache::common;

namespace {

CompileRequest sample_request(const std::string& ptx) {
  CompileRequest request;
  request.arch = "sm_90a";
  request.driver_api = 13000;
  request.driver_build = "580.159.04";
  request.options = default_option_text();
  request.priority = CompilePriority::warm;
  request.ptx = as_bytes(ptx);
  return request;
}

}  // namespace

TEST_CASE("compile messages: a request round-trips and its head is everything before the PTX") {
  const std::string ptx = ".version 9.0\n.target sm_90a\n";
  const CompileRequest request = sample_request(ptx);
  const Payload encoded = encode(request);
  const Payload head = encode_compile_request_head(request);
  REQUIRE(encoded.size() == head.size() + ptx.size());
  CHECK(std::equal(head.begin(), head.end(), encoded.begin()));
  auto decoded = decode_compile_request(Bytes(encoded));
  REQUIRE(decoded);
  CHECK(decoded->arch == "sm_90a");
  CHECK(decoded->driver_api == 13000);
  CHECK(decoded->driver_build == "580.159.04");
  CHECK(decoded->options == default_option_text());
  CHECK(decoded->priority == CompilePriority::warm);
  CHECK(std::string(reinterpret_cast<const char*>(decoded->ptx.data()), decoded->ptx.size()) == ptx);
  const KeyFields key = key_of(*decoded, Digest256{});
  CHECK(key.arch == "sm_90a");
  CHECK(key.options == default_option_text());
}

TEST_CASE("compile messages: a priority other than 0 or 1 and trailing bytes are refused") {
  const std::string ptx = "ptx";
  Payload encoded = encode(sample_request(ptx));
  Payload bad_priority = encoded;
  bad_priority[bad_priority.size() - ptx.size() - 4 - 1] = 2;
  auto refused = decode_compile_request(Bytes(bad_priority));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::invalid_argument);
  CHECK_THAT(refused.error().message, Catch::Contains("priority 2"));
  encoded.push_back(0);
  CHECK_FALSE(decode_compile_request(Bytes(encoded)));
}

TEST_CASE("compile messages: a compiled reply round-trips with its origin, an unknown origin is refused") {
  const Payload image{0x7f, 'E', 'L', 'F'};
  CompileReply reply;
  reply.origin = CompileOrigin::stored;
  reply.info.producer = "nvJitLink 13.0";
  reply.info.raw_size = image.size();
  reply.image = Bytes(image);
  Payload encoded = encode(reply);
  auto decoded = decode_compile_reply(Bytes(encoded));
  REQUIRE(decoded);
  CHECK(decoded->origin == CompileOrigin::stored);
  CHECK(decoded->info.producer == "nvJitLink 13.0");
  CHECK(Payload(decoded->image.begin(), decoded->image.end()) == image);
  encoded[0] = 2;
  CHECK_FALSE(decode_compile_reply(Bytes(encoded)));
}

TEST_CASE("compile messages: a compile error carries its message and the whole log, cut at 1 MiB") {
  CompileErrorReply error;
  error.message = "the PTX failed to compile";
  error.log = std::string(k_max_compile_log_length + 10, 'l');
  auto decoded = decode_compile_error_reply(Bytes(encode(error)));
  REQUIRE(decoded);
  CHECK(decoded->message == error.message);
  CHECK(decoded->log.size() == k_max_compile_log_length);

  // A daemon claiming a longer log is refused before the client keeps it.
  Payload over;
  ByteWriter w(over);
  w.str16("m");
  const std::string big(k_max_compile_log_length + 1, 'x');
  w.blob32(as_bytes(big));
  auto refused = decode_compile_error_reply(Bytes(over));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::too_large);
}

TEST_CASE("compile messages: a link's inputs follow an empty PTX, in order, and round-trip") {
  CompileRequest request = sample_request("");
  request.options = nvjitlink_option_text({"-O3"});
  const std::string first = ".version 9.0\n.target sm_90\n";
  const std::string second =
      "\x7f"
      "ELF library bytes";
  request.link_inputs = {{LinkInputKind::ptx, as_bytes(first)}, {LinkInputKind::library, as_bytes(second)}};
  const Payload encoded = encode(request);
  CHECK(encoded == encode_compile_request_head(request));
  auto decoded = decode_compile_request(Bytes(encoded));
  REQUIRE(decoded);
  CHECK(decoded->ptx.empty());
  REQUIRE(decoded->link_inputs.size() == 2);
  CHECK(decoded->link_inputs[0].kind == LinkInputKind::ptx);
  CHECK(std::string(reinterpret_cast<const char*>(decoded->link_inputs[1].data.data()),
                    decoded->link_inputs[1].data.size()) == second);
  CHECK(link_content_of(*decoded) == link_content_of(request));
  const std::vector<LinkInputView> views = {{LinkInputKind::ptx, as_bytes(first), {}},
                                            {LinkInputKind::library, as_bytes(second), {}}};
  CHECK(link_content_of(request) == link_content_digest(views));
  CHECK(link_content_fast_of(request) == link_content_fast(views));
}

TEST_CASE("compile messages: link inputs beside a PTX, none, an unknown kind or too many are refused") {
  CompileRequest request = sample_request("");
  const std::string data = "x";
  request.link_inputs = {{LinkInputKind::ptx, as_bytes(data)}};
  const Payload good = encode(request);
  const std::size_t count_at = encode_compile_request_head(sample_request("")).size();

  Payload with_ptx = encode_compile_request_head(sample_request("p"));
  with_ptx.push_back('p');
  with_ptx.insert(with_ptx.end(), good.begin() + static_cast<std::ptrdiff_t>(count_at), good.end());
  auto refused = decode_compile_request(Bytes(with_ptx));
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("both a PTX and link inputs"));

  Payload none = good;
  none.resize(count_at + 2);
  none[count_at] = 0;
  none[count_at + 1] = 0;
  CHECK_THAT(decode_compile_request(Bytes(none)).error().message, Catch::Contains("link_count 0"));

  Payload many = good;
  many[count_at] = 0x01;
  many[count_at + 1] = 0x01;  // 257
  CHECK_THAT(decode_compile_request(Bytes(many)).error().message, Catch::Contains("link_count 257"));

  Payload bad_kind = good;
  bad_kind[count_at + 2] = 7;
  CHECK_THAT(decode_compile_request(Bytes(bad_kind)).error().message, Catch::Contains("kind 7"));
}
