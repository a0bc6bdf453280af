// Payload codec tests against proto/PROTOCOL.md §4-§5: every message round-trips, every limit the
// spec names is enforced with the right error code, and hostile payloads (truncated, padded,
// over-long) fail cleanly instead of reading past the buffer.
#include <catch2/catch.hpp>

#include <proto/messages.hpp>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

using namespace jitcache::proto;
using namespace jitcache::common;

namespace {

Digest256 digest_filled(std::uint8_t first) {
  Digest256 d;
  for (std::size_t i = 0; i < d.bytes.size(); ++i) d.bytes[i] = static_cast<std::uint8_t>(first + i);
  return d;
}

KeyFields sample_key() {
  KeyFields key;
  key.content = digest_filled(0x10);
  key.arch = "sm_90a";
  key.driver_api = 13000;
  key.driver_build = "580.159.04";
  key.options = "max_registers=0;opt_level=4";
  return key;
}

EntryInfo sample_entry(std::uint8_t seed) {
  EntryInfo e;
  e.key_id = digest_filled(seed);
  e.key = sample_key();
  e.key.driver_api += seed;
  e.namespace_id = 1000u + seed;
  e.producer = "driver 13000/580.159.04";
  e.codec = 0;
  e.raw_size = 0x0102030405060708ull;
  e.stored_size = 4096;
  for (std::size_t i = 0; i < e.checksum.bytes.size(); ++i) e.checksum.bytes[i] = static_cast<std::uint8_t>(0xF0 - i);
  e.created_at_ms = -1;  // signed fields must keep their sign across the wire
  e.last_used_at_ms = 1'700'000'000'000;
  e.hits = ~0ull;
  e.compile_time_us = 12345;
  e.quarantined_at_ms = 1'700'000'200'000;
  return e;
}

// EntryInfo has no operator==; compare field by field so a failure names the field.
void check_same_entry(const EntryInfo& a, const EntryInfo& b) {
  CHECK(a.key_id == b.key_id);
  CHECK(a.key == b.key);
  CHECK(a.namespace_id == b.namespace_id);
  CHECK(a.producer == b.producer);
  CHECK(a.codec == b.codec);
  CHECK(a.raw_size == b.raw_size);
  CHECK(a.stored_size == b.stored_size);
  CHECK(a.checksum == b.checksum);
  CHECK(a.created_at_ms == b.created_at_ms);
  CHECK(a.last_used_at_ms == b.last_used_at_ms);
  CHECK(a.hits == b.hits);
  CHECK(a.compile_time_us == b.compile_time_us);
  CHECK(a.quarantined_at_ms == b.quarantined_at_ms);
}

bool points_into(Bytes view, const Payload& buffer) {
  const std::uint8_t* begin = buffer.data();
  const std::uint8_t* end = buffer.data() + buffer.size();
  return std::less_equal<const std::uint8_t*>()(begin, view.data()) &&
         std::less_equal<const std::uint8_t*>()(view.data() + view.size(), end);
}

Payload concat(Payload head, const Payload& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

// A raw str16 whose length prefix may exceed its field's limit: the encoders cut such strings, so a
// hostile payload has to be written by hand.
void put_str16(ByteWriter& w, std::uint16_t length, char fill = 'a') {
  w.u16(length);
  for (std::uint16_t i = 0; i < length; ++i) w.u8(static_cast<std::uint8_t>(fill));
}

Payload list_request_payload(std::uint32_t limit, std::string_view prefix = "", std::uint8_t namespace_filter = 0) {
  Payload out;
  ByteWriter w(out);
  w.str16("");
  w.u32(0);
  w.str16("");
  w.u8(namespace_filter);
  w.u32(0);
  w.str16(prefix);
  w.u32(limit);
  w.str16("");
  return out;
}

Payload remove_request_payload(std::string_view prefix) {
  Payload out;
  ByteWriter w(out);
  w.str16(prefix);
  return out;
}

Payload lookup_by_prefix_payload(std::string_view prefix) {
  Payload out;
  ByteWriter w(out);
  w.u8(1);
  w.str16(prefix);
  return out;
}

ReportFailureRequest sample_report(FailureStage stage = FailureStage::jit) {
  ReportFailureRequest m;
  m.key = sample_key();
  m.cu_result = 218;  // CUDA_ERROR_INVALID_PTX
  m.stage = stage;
  m.detail = "ptxas fatal: Unresolved extern function 'f'";
  return m;
}

// A REPORT_FAILURE request written field by field, so each field can be made wrong.
Payload report_failure_payload(std::uint32_t cu_result, std::uint8_t stage, std::uint16_t detail_length) {
  Payload out;
  ByteWriter w(out);
  encode_key(w, sample_key());
  w.u32(cu_result);
  w.u8(stage);
  put_str16(w, detail_length, 'd');
  return out;
}

template <class T>
void require_error(const Result<T>& result, ErrorCode code, std::string_view fragment) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().code == code);
  CHECK_THAT(result.error().message, Catch::Contains(std::string(fragment)));
}

}  // namespace

// ---- known answers: the field order and widths of PROTOCOL.md, byte for byte

TEST_CASE("messages: a HELLO request encodes as min_version, max_version, then client_name as str16") {
  HelloRequest m;
  m.min_version = 1;
  m.max_version = 0x0203;
  m.client_name = "cli";
  CHECK(encode(m) == Payload{0x01, 0x00, 0x03, 0x02, 0x03, 0x00, 'c', 'l', 'i'});
}

TEST_CASE("messages: a key encodes as schema, content digest, arch, driver_api, driver_build, options") {
  KeyFields key;
  key.content = digest_filled(0xA0);
  key.arch = "sm_90";
  key.driver_api = 0x000032C8;  // 13000
  key.driver_build = "5";
  key.options = "";
  Payload out;
  ByteWriter w(out);
  encode_key(w, key);

  const Payload schema{0x02, 0x00};  // k_key_schema_version 2
  const Payload tail{0x05, 0x00, 's', 'm', '_', '9', '0', 0xC8, 0x32, 0x00, 0x00, 0x01, 0x00, '5', 0x00, 0x00};
  Payload expected = concat(schema, Payload(key.content.bytes.begin(), key.content.bytes.end()));
  expected = concat(expected, tail);
  CHECK(out == expected);
}

TEST_CASE("messages: a PUT reply encodes as key_id, namespace, replaced") {
  PutReply m;
  m.key_id = digest_filled(0);
  m.namespace_id = 0x01020304;
  m.replaced = true;
  Payload expected(m.key_id.bytes.begin(), m.key_id.bytes.end());
  expected.insert(expected.end(), {0x04, 0x03, 0x02, 0x01, 0x01});
  CHECK(encode(m) == expected);
}

TEST_CASE("messages: an entry_info ends with quarantined_at_ms as a little-endian i64 after compile_time_us") {
  EntryInfo info = sample_entry(1);
  info.compile_time_us = 0x0A0B0C0D;
  info.quarantined_at_ms = 0x0102030405060708;
  Payload out;
  ByteWriter w(out);
  encode_entry_info(w, info);
  const Payload tail(out.end() - 16, out.end());
  CHECK(tail == Payload{0x0D, 0x0C, 0x0B, 0x0A, 0, 0, 0, 0, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01});
}

TEST_CASE("messages: a REPORT_FAILURE request encodes as key, cu_result, stage, then detail as str16") {
  ReportFailureRequest m = sample_report(FailureStage::ptx_version);
  m.cu_result = 222;
  m.detail = "v9";
  Payload key;
  ByteWriter key_writer(key);
  encode_key(key_writer, m.key);
  CHECK(encode(m) == concat(key, Payload{222, 0, 0, 0, 2, 2, 0, 'v', '9'}));
}

TEST_CASE("messages: a REPORT_FAILURE reply encodes as outcome, then namespace") {
  ReportFailureReply m;
  m.outcome = ReportFailureOutcome::already_quarantined;
  m.namespace_id = 0x01020304;
  CHECK(encode(m) == Payload{0x01, 0x04, 0x03, 0x02, 0x01});
}

// ---- round trips

TEST_CASE("messages: a HELLO request and reply round-trip") {
  HelloRequest request;
  request.min_version = 1;
  request.max_version = 3;
  request.client_name = std::string(k_max_client_name_length, 'n');
  auto decoded_request = decode_hello_request(encode(request));
  REQUIRE(decoded_request.ok());
  CHECK(decoded_request->min_version == 1);
  CHECK(decoded_request->max_version == 3);
  CHECK(decoded_request->client_name == request.client_name);

  HelloReply reply;
  reply.version = 1;
  reply.capabilities = k_capability_store | (1ull << 63);
  reply.daemon_version = "jitcached 0.1.0";
  reply.max_frame_bytes = k_default_max_frame_bytes;
  auto decoded_reply = decode_hello_reply(encode(reply));
  REQUIRE(decoded_reply.ok());
  CHECK(decoded_reply->version == reply.version);
  CHECK(decoded_reply->capabilities == reply.capabilities);
  CHECK(decoded_reply->daemon_version == reply.daemon_version);
  CHECK(decoded_reply->max_frame_bytes == reply.max_frame_bytes);
}

TEST_CASE("messages: a LOOKUP request by key fields round-trips") {
  LookupRequest m;
  m.selector = LookupSelector::key;
  m.key = sample_key();
  auto decoded = decode_lookup_request(encode(m));
  REQUIRE(decoded.ok());
  CHECK(decoded->selector == LookupSelector::key);
  CHECK(decoded->key == m.key);
}

TEST_CASE("messages: a LOOKUP request by key id prefix round-trips") {
  LookupRequest m;
  m.selector = LookupSelector::key_id_prefix;
  m.key_id_prefix = "0123abcd";
  auto decoded = decode_lookup_request(encode(m));
  REQUIRE(decoded.ok());
  CHECK(decoded->selector == LookupSelector::key_id_prefix);
  CHECK(decoded->key_id_prefix == "0123abcd");
}

TEST_CASE("messages: a LOOKUP reply head followed by the image bytes decodes with the image viewed in place") {
  EntryInfo info = sample_entry(3);
  Payload image{0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x7F};
  Payload payload = concat(encode_lookup_reply_head(info, static_cast<std::uint32_t>(image.size())), image);

  auto decoded = decode_lookup_reply(payload);
  REQUIRE(decoded.ok());
  check_same_entry(decoded->info, info);
  REQUIRE(decoded->image.size() == image.size());
  CHECK(std::equal(decoded->image.begin(), decoded->image.end(), image.begin()));
  // No copy: the daemon and client rely on the image staying where the socket read put it.
  CHECK(points_into(decoded->image, payload));
  CHECK(decoded->image.data() == payload.data() + payload.size() - image.size());
}

TEST_CASE("messages: a LOOKUP reply head, by bytes or by descriptor, is encoded into one allocation of its size") {
  // The daemon encodes one per hit: grown as it is written, it cost a chain of reallocations.
  const EntryInfo info = sample_entry(5);
  const Payload head = encode_lookup_reply_head(info, 4096);
  CHECK(head.capacity() == head.size());
  const Payload by_descriptor = encode(LookupReplyByDescriptor{info, 1 << 20});
  CHECK(by_descriptor.capacity() == by_descriptor.size());
}

TEST_CASE("messages: a LOOKUP reply with an empty image round-trips") {
  EntryInfo info = sample_entry(4);
  auto decoded = decode_lookup_reply(encode_lookup_reply_head(info, 0));
  REQUIRE(decoded.ok());
  check_same_entry(decoded->info, info);
  CHECK(decoded->image.empty());
}

TEST_CASE("messages: a PUT request round-trips and its image is a view into the payload") {
  Payload image(300, 0x5A);
  PutRequest m;
  m.key = sample_key();
  m.producer = std::string(k_max_producer_length, 'p');
  m.compile_time_us = 987654321;
  m.image = image;
  Payload payload = encode(m);
  CHECK(payload == concat(encode_put_request_head(m), image));

  auto decoded = decode_put_request(payload);
  REQUIRE(decoded.ok());
  CHECK(decoded->key == m.key);
  CHECK(decoded->producer == m.producer);
  CHECK(decoded->compile_time_us == m.compile_time_us);
  REQUIRE(decoded->image.size() == image.size());
  CHECK(std::equal(decoded->image.begin(), decoded->image.end(), image.begin()));
  CHECK(points_into(decoded->image, payload));
}

TEST_CASE("messages: request decoders refuse unprintable free text and a compile_time_us above 2^63 - 1") {
  Payload image(16, 0x5A);
  PutRequest put;
  put.key = sample_key();
  put.producer = "nvcc \x1b[2J";
  put.image = image;
  require_error(decode_put_request(encode(put)), ErrorCode::invalid_argument, "producer is not printable text");
  put.producer = "nvcc";
  put.compile_time_us = std::uint64_t{1} << 63;
  require_error(decode_put_request(encode(put)), ErrorCode::invalid_argument, "compile_time_us");
  put.compile_time_us = (std::uint64_t{1} << 63) - 1;
  CHECK(decode_put_request(encode(put)).ok());

  ReportFailureRequest report = sample_report();
  report.detail = "line one\nline two";
  require_error(decode_report_failure_request(encode(report)), ErrorCode::invalid_argument, "detail is not printable");
  HelloRequest hello;
  hello.client_name = "tool\xe2\x80\xae";
  require_error(decode_hello_request(encode(hello)), ErrorCode::invalid_argument, "client_name is not printable");
}

TEST_CASE("messages: a REPORT_FAILURE request round-trips for every stage, with a detail at its limit") {
  for (FailureStage stage : {FailureStage::image, FailureStage::ptx_version, FailureStage::jit, FailureStage::load}) {
    CAPTURE(failure_stage_name(stage));
    ReportFailureRequest m = sample_report(stage);
    m.cu_result = 0xFFFFFFFF;
    m.detail = std::string(k_max_failure_detail_length, 'x');
    auto decoded = decode_report_failure_request(encode(m));
    REQUIRE(decoded.ok());
    CHECK(decoded->key == m.key);
    CHECK(decoded->cu_result == m.cu_result);
    CHECK(decoded->stage == stage);
    CHECK(decoded->detail == m.detail);
  }
  ReportFailureRequest empty_detail = sample_report();
  empty_detail.detail.clear();
  auto decoded = decode_report_failure_request(encode(empty_detail));
  REQUIRE(decoded.ok());
  CHECK(decoded->detail.empty());
}

TEST_CASE("messages: a REPORT_FAILURE reply round-trips in every outcome, and outcome 3 is refused") {
  for (auto outcome : {ReportFailureOutcome::quarantined, ReportFailureOutcome::already_quarantined,
                       ReportFailureOutcome::hidden_from_reporter}) {
    ReportFailureReply m;
    m.outcome = outcome;
    m.namespace_id = 1000;
    auto decoded = decode_report_failure_reply(encode(m));
    REQUIRE(decoded.ok());
    CHECK(decoded->outcome == outcome);
    CHECK(decoded->namespace_id == 1000);
  }
  Payload out;
  ByteWriter w(out);
  w.u8(3);
  w.u32(0);
  require_error(decode_report_failure_reply(out), ErrorCode::invalid_argument, "outcome 3");
}

TEST_CASE("messages: failure stages have the names the daemon's log uses") {
  CHECK(failure_stage_name(FailureStage::image) == "image");
  CHECK(failure_stage_name(FailureStage::ptx_version) == "ptx_version");
  CHECK(failure_stage_name(FailureStage::jit) == "jit");
  CHECK(failure_stage_name(FailureStage::load) == "load");
  CHECK(failure_stage_name(static_cast<FailureStage>(0)) == "unknown");
  STATIC_REQUIRE(static_cast<int>(FailureStage::image) == 1);
  STATIC_REQUIRE(static_cast<int>(FailureStage::load) == 4);
  STATIC_REQUIRE(static_cast<int>(ReportFailureOutcome::quarantined) == 0);
  STATIC_REQUIRE(static_cast<int>(ReportFailureOutcome::already_quarantined) == 1);
  STATIC_REQUIRE(static_cast<int>(ReportFailureOutcome::hidden_from_reporter) == 2);
}

TEST_CASE("messages: a PUT reply round-trips in both replaced states") {
  for (bool replaced : {false, true}) {
    PutReply m;
    m.key_id = digest_filled(0x77);
    m.namespace_id = 0;
    m.replaced = replaced;
    auto decoded = decode_put_reply(encode(m));
    REQUIRE(decoded.ok());
    CHECK(decoded->key_id == m.key_id);
    CHECK(decoded->namespace_id == 0);
    CHECK(decoded->replaced == replaced);
  }
}

TEST_CASE("messages: a STATS reply round-trips names and values in order") {
  StatsReply m;
  m.values = {{"entries", 3}, {"bytes_raw", 1ull << 40}, {"errors.too_large", 0}, {std::string(64, 's'), ~0ull}};
  auto decoded = decode_stats_reply(encode(m));
  REQUIRE(decoded.ok());
  CHECK(decoded->values == m.values);

  auto empty = decode_stats_reply(encode(StatsReply{}));
  REQUIRE(empty.ok());
  CHECK(empty->values.empty());
}

TEST_CASE("messages: a LIST request with every filter set round-trips") {
  ListRequest m;
  m.arch = "sm_100f";
  m.driver_api = 12080;
  m.driver_build = "570.1";
  m.namespace_filter = true;
  m.namespace_id = 1001;
  m.key_id_prefix = std::string(64, 'f');
  m.limit = k_max_list_limit;
  m.cursor = std::string(k_max_cursor_length, 'c');
  auto decoded = decode_list_request(encode(m));
  REQUIRE(decoded.ok());
  CHECK(decoded->arch == m.arch);
  CHECK(decoded->driver_api == m.driver_api);
  CHECK(decoded->driver_build == m.driver_build);
  CHECK(decoded->namespace_filter);
  CHECK(decoded->namespace_id == m.namespace_id);
  CHECK(decoded->key_id_prefix == m.key_id_prefix);
  CHECK(decoded->limit == m.limit);
  CHECK(decoded->cursor == m.cursor);
}

TEST_CASE("messages: LIST's trailing stale_only is sent only when set, and read when present") {
  ListRequest m;
  const Payload plain = encode(m);
  m.stale_only = true;
  const Payload stale = encode(m);
  CHECK(stale.size() == plain.size() + 1);
  auto decoded = decode_list_request(stale);
  REQUIRE(decoded.ok());
  CHECK(decoded->stale_only);
  auto without = decode_list_request(plain);
  REQUIRE(without.ok());
  CHECK_FALSE(without->stale_only);
  require_error(decode_list_request(concat(plain, Payload{0x02})), ErrorCode::invalid_argument, "stale_only");
}

TEST_CASE("messages: a GC reply round-trips, and a short one is refused") {
  GcReply m;
  m.evicted_entries = 3;
  m.evicted_bytes = 5ull << 32;
  m.stale_entries = 2;
  m.entries = 7;
  m.bytes_stored = 123456789;
  const Payload payload = encode(m);
  CHECK(payload.size() == 40);
  auto decoded = decode_gc_reply(payload);
  REQUIRE(decoded.ok());
  CHECK(decoded->evicted_entries == 3);
  CHECK(decoded->evicted_bytes == 5ull << 32);
  CHECK(decoded->stale_entries == 2);
  CHECK(decoded->entries == 7);
  CHECK(decoded->bytes_stored == 123456789);
  CHECK_FALSE(decode_gc_reply(Payload(payload.begin(), payload.end() - 1)).ok());
}

TEST_CASE("messages: a LIST request with no filters (the defaults) round-trips") {
  auto decoded = decode_list_request(encode(ListRequest{}));
  REQUIRE(decoded.ok());
  CHECK(decoded->arch.empty());
  CHECK(decoded->driver_api == 0);
  CHECK_FALSE(decoded->namespace_filter);
  CHECK(decoded->key_id_prefix.empty());
  CHECK(decoded->limit == 100);
  CHECK(decoded->cursor.empty());
}

TEST_CASE("messages: a LIST reply round-trips its entries in order and the next cursor") {
  ListReply m;
  m.entries = {sample_entry(1), sample_entry(2), sample_entry(3)};
  m.next_cursor = "abc";
  auto decoded = decode_list_reply(encode(m));
  REQUIRE(decoded.ok());
  REQUIRE(decoded->entries.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) check_same_entry(decoded->entries[i], m.entries[i]);
  CHECK(decoded->next_cursor == "abc");

  auto empty = decode_list_reply(encode(ListReply{}));
  REQUIRE(empty.ok());
  CHECK(empty->entries.empty());
  CHECK(empty->next_cursor.empty());
}

TEST_CASE("messages: a REMOVE request and reply round-trip") {
  RemoveRequest request;
  request.key_id_prefix = "DEADbeef01";
  auto decoded_request = decode_remove_request(encode(request));
  REQUIRE(decoded_request.ok());
  CHECK(decoded_request->key_id_prefix == request.key_id_prefix);

  RemoveReply reply;
  reply.removed = 0xFFFFFFFF;
  auto decoded_reply = decode_remove_reply(encode(reply));
  REQUIRE(decoded_reply.ok());
  CHECK(decoded_reply->removed == 0xFFFFFFFF);
}

TEST_CASE("messages: an error message round-trips") {
  auto decoded = decode_error_message(encode_error_message("arch \"sm_9x\" is not of the form sm_<digits>[a|f]"));
  REQUIRE(decoded.ok());
  CHECK(*decoded == "arch \"sm_9x\" is not of the form sm_<digits>[a|f]");
}

TEST_CASE("messages: an error message longer than 1024 bytes is cut to 1024 so the client can still read it") {
  std::string message(3000, 'x');
  message[1023] = 'y';
  message[1024] = 'z';
  Payload payload = encode_error_message(message);
  CHECK(payload.size() == 2 + k_max_message_length);
  auto decoded = decode_error_message(payload);
  REQUIRE(decoded.ok());
  CHECK(decoded->size() == k_max_message_length);
  CHECK(decoded->back() == 'y');
}

TEST_CASE("messages: PING and STATS requests take an empty payload and refuse any byte") {
  CHECK(decode_empty({}, "PING").ok());
  Payload one{0};
  require_error(decode_empty(one, "STATS"), ErrorCode::invalid_argument, "STATS");
}

// ---- truncation and trailing bytes

TEST_CASE("messages: every proper prefix of each sample message fails cleanly with invalid_argument") {
  PutRequest put;
  put.key = sample_key();
  put.producer = "nvcc";
  Payload image{1, 2, 3, 4, 5};
  put.image = image;
  ListRequest list;
  list.arch = "sm_80";
  list.key_id_prefix = "abcdef01";
  list.cursor = "next";
  ListReply list_reply;
  list_reply.entries = {sample_entry(1), sample_entry(2)};
  list_reply.next_cursor = "c";
  StatsReply stats;
  stats.values = {{"hits", 1}, {"misses", 2}};
  LookupRequest lookup_by_key;
  lookup_by_key.key = sample_key();
  HelloReply hello_reply;
  hello_reply.daemon_version = "0.1";

  struct Sample {
    std::string name;
    Payload payload;
    std::function<Error(Bytes)> decode;
  };
  auto error_of = [](auto&& result) { return result.ok() ? Error{ErrorCode::internal, "decoded"} : result.error(); };
  std::vector<Sample> samples{
      {"HELLO request", encode(HelloRequest{1, 1, "tool"}), [&](Bytes b) { return error_of(decode_hello_request(b)); }},
      {"HELLO reply", encode(hello_reply), [&](Bytes b) { return error_of(decode_hello_reply(b)); }},
      {"LOOKUP request", encode(lookup_by_key), [&](Bytes b) { return error_of(decode_lookup_request(b)); }},
      {"LOOKUP reply", concat(encode_lookup_reply_head(sample_entry(9), 4), Payload{9, 8, 7, 6}),
       [&](Bytes b) { return error_of(decode_lookup_reply(b)); }},
      {"PUT request", encode(put), [&](Bytes b) { return error_of(decode_put_request(b)); }},
      {"PUT reply", encode(PutReply{digest_filled(1), 5, true}),
       [&](Bytes b) { return error_of(decode_put_reply(b)); }},
      {"STATS reply", encode(stats), [&](Bytes b) { return error_of(decode_stats_reply(b)); }},
      {"LIST request", encode(list), [&](Bytes b) { return error_of(decode_list_request(b)); }},
      {"LIST reply", encode(list_reply), [&](Bytes b) { return error_of(decode_list_reply(b)); }},
      {"REMOVE request", encode(RemoveRequest{"0123456789"}),
       [&](Bytes b) { return error_of(decode_remove_request(b)); }},
      {"REMOVE reply", encode(RemoveReply{3}), [&](Bytes b) { return error_of(decode_remove_reply(b)); }},
      {"REPORT_FAILURE request", encode(sample_report()),
       [&](Bytes b) { return error_of(decode_report_failure_request(b)); }},
      {"REPORT_FAILURE reply", encode(ReportFailureReply{ReportFailureOutcome::already_quarantined, 7}),
       [&](Bytes b) { return error_of(decode_report_failure_reply(b)); }},
      {"error reply", encode_error_message("no"), [&](Bytes b) { return error_of(decode_error_message(b)); }},
  };

  for (const Sample& sample : samples) {
    CAPTURE(sample.name);
    // The whole sample decodes, so each failure below is the truncation's doing.
    REQUIRE(sample.decode(sample.payload).message == "decoded");
    for (std::size_t length = 0; length < sample.payload.size(); ++length) {
      CAPTURE(length);
      // A copy of exactly `length` bytes, so AddressSanitizer sees any read past the prefix.
      Payload prefix(sample.payload.begin(), sample.payload.begin() + static_cast<std::ptrdiff_t>(length));
      Error error = sample.decode(prefix);
      CHECK(error.code == ErrorCode::invalid_argument);
      CHECK_THAT(error.message, Catch::Contains("payload ends inside field"));
    }
  }
}

TEST_CASE("messages: a byte after the last field is refused as trailing garbage") {
  Payload garbage{0x00};
  require_error(decode_hello_request(concat(encode(HelloRequest{}), garbage)), ErrorCode::invalid_argument,
                "unexpected bytes");
  require_error(decode_remove_request(concat(encode(RemoveRequest{"abcdef0123"}), garbage)),
                ErrorCode::invalid_argument, "1 unexpected bytes after the last field of REMOVE");
  // LIST may end with stale_only (only ever 1): a byte after that one is garbage, and a 0 is refused
  // because absent already means 0.
  require_error(decode_list_request(concat(encode(ListRequest{}), Payload{0x01, 0x00})), ErrorCode::invalid_argument,
                "unexpected bytes");
  require_error(decode_list_request(concat(encode(ListRequest{}), Payload{0x00})), ErrorCode::invalid_argument,
                "stale_only");
  require_error(decode_remove_reply(concat(encode(RemoveReply{}), garbage)), ErrorCode::invalid_argument,
                "unexpected bytes");
  require_error(decode_error_message(concat(encode_error_message("x"), garbage)), ErrorCode::invalid_argument,
                "unexpected bytes");
  require_error(decode_report_failure_request(concat(encode(sample_report()), garbage)), ErrorCode::invalid_argument,
                "1 unexpected bytes after the last field of REPORT_FAILURE");
  require_error(decode_report_failure_reply(concat(encode(ReportFailureReply{}), garbage)), ErrorCode::invalid_argument,
                "unexpected bytes");
}

TEST_CASE("messages: a REPORT_FAILURE stage of 0 or above 4 is refused, 1 to 4 are accepted") {
  for (std::uint8_t stage : {std::uint8_t{0}, std::uint8_t{5}, std::uint8_t{0xFF}}) {
    CAPTURE(stage);
    require_error(decode_report_failure_request(report_failure_payload(209, stage, 3)), ErrorCode::invalid_argument,
                  "REPORT_FAILURE stage " + std::to_string(stage));
  }
  for (std::uint8_t stage = 1; stage <= 4; ++stage) {
    CAPTURE(stage);
    CHECK(decode_report_failure_request(report_failure_payload(209, stage, 3)).ok());
  }
}

TEST_CASE("messages: a REPORT_FAILURE with cu_result 0 (CUDA_SUCCESS) is refused") {
  require_error(decode_report_failure_request(report_failure_payload(0, 1, 0)), ErrorCode::invalid_argument,
                "cu_result 0");
}

TEST_CASE("messages: a REPORT_FAILURE detail over 1024 bytes is refused with too_large") {
  CHECK(decode_report_failure_request(report_failure_payload(200, 4, 1024)).ok());
  require_error(decode_report_failure_request(report_failure_payload(200, 4, 1025)), ErrorCode::too_large, "detail");
  // Claimed but absent: refused by the length alone.
  Payload claimed = report_failure_payload(200, 4, 0);
  claimed.resize(claimed.size() - 2);
  ByteWriter w(claimed);
  w.u16(0xFFFF);
  require_error(decode_report_failure_request(claimed), ErrorCode::too_large, "detail");
}

TEST_CASE("messages: a PUT whose image length claims more bytes than follow is refused, not over-read") {
  PutRequest m;
  m.key = sample_key();
  Payload payload = encode_put_request_head(m);
  // Overwrite the image length (the head's last 4 bytes) with 2^32-1 and supply 3 bytes.
  for (std::size_t i = payload.size() - 4; i < payload.size(); ++i) payload[i] = 0xFF;
  payload.insert(payload.end(), {1, 2, 3});
  require_error(decode_put_request(payload), ErrorCode::invalid_argument, "image");
}

TEST_CASE("messages: a PUT whose image is followed by bytes that are not a content_fast is refused") {
  Payload image{1, 2};
  PutRequest m;
  m.key = sample_key();
  m.image = image;
  // Fewer bytes than a checksum: content_fast cannot be read.
  require_error(decode_put_request(concat(encode(m), Payload{0xAA})), ErrorCode::invalid_argument, "content_fast");
  // More: a content_fast, then bytes left over.
  m.content_fast = xxh3_128(Bytes(image));
  require_error(decode_put_request(concat(encode(m), Payload{0xAA})), ErrorCode::invalid_argument, "unexpected bytes");
}

TEST_CASE("messages: a PUT carries content_fast after its image, and one without it still decodes") {
  Payload image{7, 8, 9};
  PutRequest m;
  m.key = sample_key();
  m.image = image;
  auto plain = decode_put_request(encode(m));
  REQUIRE(plain.ok());
  CHECK_FALSE(plain->content_fast.has_value());

  m.content_fast = xxh3_128(Bytes(image));
  const Payload with_fast = encode(m);
  CHECK(with_fast.size() == encode_put_request_head(m).size() + image.size() + 16);
  auto decoded = decode_put_request(with_fast);
  REQUIRE(decoded.ok());
  CHECK(decoded->content_fast == m.content_fast);
  CHECK(std::ranges::equal(decoded->image, image));
}

TEST_CASE("messages: a LOOKUP reply by descriptor carries the entry and the image size, and nothing else") {
  LookupReplyByDescriptor m;
  m.info.key = sample_key();
  m.info.raw_size = 1'600'000;
  m.image_size = 1'600'000;
  const Payload payload = encode(m);
  auto decoded = decode_lookup_reply_by_descriptor(payload);
  REQUIRE(decoded.ok());
  CHECK(decoded->info.key == m.info.key);
  CHECK(decoded->image_size == m.image_size);
  require_error(decode_lookup_reply_by_descriptor(concat(payload, Payload{1})), ErrorCode::invalid_argument,
                "unexpected bytes");
}

TEST_CASE("messages: a LOOKUP by fast key round-trips every field") {
  LookupRequest m;
  m.selector = LookupSelector::fast_key;
  m.fast_key = fast_key_of(sample_key(), xxh3_128(as_bytes("ptx")));
  auto decoded = decode_lookup_request(encode(m));
  REQUIRE(decoded.ok());
  CHECK(decoded->selector == LookupSelector::fast_key);
  CHECK(decoded->fast_key == m.fast_key);
}

// ---- field limits

TEST_CASE("messages: a str16 field over its limit is refused with too_large naming the field") {
  struct Case {
    std::string field;
    std::size_t limit;
    std::function<Payload(std::uint16_t)> build;
    std::function<Error(Bytes)> decode;
  };
  auto error_of = [](auto&& result) { return result.ok() ? Error{ErrorCode::internal, "decoded"} : result.error(); };
  // A key whose `which`-th str16 (0 arch, 1 driver_build, 2 options) has the given length.
  auto key_with = [](int which, std::uint16_t length) {
    Payload out;
    ByteWriter w(out);
    w.u16(k_key_schema_version);
    w.digest(digest_filled(0));
    put_str16(w, which == 0 ? length : 5);
    w.u32(13000);
    put_str16(w, which == 1 ? length : 5);
    put_str16(w, which == 2 ? length : 0);
    return out;
  };
  auto put_with = [&](int which, std::uint16_t length) {
    Payload out = key_with(which, length);
    ByteWriter w(out);
    put_str16(w, which == 3 ? length : 4);
    w.u64(0);
    w.blob32(Bytes());
    return out;
  };
  std::vector<Case> cases{
      {"client_name", k_max_client_name_length,
       [](std::uint16_t n) {
         Payload out;
         ByteWriter w(out);
         w.u16(1);
         w.u16(1);
         put_str16(w, n);
         return out;
       },
       [&](Bytes b) { return error_of(decode_hello_request(b)); }},
      {"daemon_version", k_max_version_string_length,
       [](std::uint16_t n) {
         Payload out;
         ByteWriter w(out);
         w.u16(1);
         w.u64(1);
         put_str16(w, n);
         w.u64(k_default_max_frame_bytes);
         return out;
       },
       [&](Bytes b) { return error_of(decode_hello_reply(b)); }},
      {"arch", k_max_arch_length, [&](std::uint16_t n) { return put_with(0, n); },
       [&](Bytes b) { return error_of(decode_put_request(b)); }},
      {"driver_build", k_max_driver_build_length, [&](std::uint16_t n) { return put_with(1, n); },
       [&](Bytes b) { return error_of(decode_put_request(b)); }},
      {"options", k_max_options_length, [&](std::uint16_t n) { return put_with(2, n); },
       [&](Bytes b) { return error_of(decode_put_request(b)); }},
      {"producer", k_max_producer_length, [&](std::uint16_t n) { return put_with(3, n); },
       [&](Bytes b) { return error_of(decode_put_request(b)); }},
      {"producer", k_max_producer_length,
       [](std::uint16_t n) {
         // A LOOKUP reply: the producer inside entry_info, which LIST replies share.
         Payload out;
         ByteWriter w(out);
         w.digest(digest_filled(1));
         encode_key(w, sample_key());
         w.u32(0);
         put_str16(w, n);
         w.u8(0);
         w.u64(0);
         w.u64(0);
         w.checksum(Checksum128{});
         w.i64(0);
         w.i64(0);
         w.u64(0);
         w.u64(0);
         w.i64(0);
         w.blob32(Bytes());
         return out;
       },
       [&](Bytes b) { return error_of(decode_lookup_reply(b)); }},
      {"next_cursor", k_max_cursor_length,
       [](std::uint16_t n) {
         Payload out;
         ByteWriter w(out);
         w.u32(0);
         put_str16(w, n);
         return out;
       },
       [&](Bytes b) { return error_of(decode_list_reply(b)); }},
      {"cursor", k_max_cursor_length,
       [](std::uint16_t n) {
         Payload out = list_request_payload(10);
         out.resize(out.size() - 2);  // drop the empty cursor
         ByteWriter w(out);
         put_str16(w, n);
         return out;
       },
       [&](Bytes b) { return error_of(decode_list_request(b)); }},
      {"name", k_max_stat_name_length,
       [](std::uint16_t n) {
         Payload out;
         ByteWriter w(out);
         w.u32(1);
         put_str16(w, n);
         w.u64(1);
         return out;
       },
       [&](Bytes b) { return error_of(decode_stats_reply(b)); }},
      {"detail", k_max_failure_detail_length, [](std::uint16_t n) { return report_failure_payload(209, 1, n); },
       [&](Bytes b) { return error_of(decode_report_failure_request(b)); }},
      {"message", k_max_message_length,
       [](std::uint16_t n) {
         Payload out;
         ByteWriter w(out);
         put_str16(w, n);
         return out;
       },
       [&](Bytes b) { return error_of(decode_error_message(b)); }},
  };

  for (const Case& c : cases) {
    CAPTURE(c.field);
    CHECK(c.decode(c.build(static_cast<std::uint16_t>(c.limit))).message == "decoded");
    Error error = c.decode(c.build(static_cast<std::uint16_t>(c.limit + 1)));
    CHECK(error.code == ErrorCode::too_large);
    CHECK_THAT(error.message, Catch::StartsWith("field " + c.field + " is "));
    CHECK_THAT(error.message, Catch::Contains("limit is " + std::to_string(c.limit)));
  }
}

TEST_CASE("messages: an over-long str16 is refused by its length alone, before its bytes are needed") {
  Payload out;
  ByteWriter w(out);
  w.u16(1);
  w.u16(1);
  w.u16(0xFFFF);  // client_name claims 65535 bytes and none follow
  require_error(decode_hello_request(out), ErrorCode::too_large, "client_name");
}

TEST_CASE("messages: a LIST limit of 0 or 1001 is refused, 1 and 1000 are accepted") {
  require_error(decode_list_request(list_request_payload(0)), ErrorCode::invalid_argument, "LIST limit 0");
  require_error(decode_list_request(list_request_payload(1001)), ErrorCode::invalid_argument, "LIST limit 1001");
  require_error(decode_list_request(list_request_payload(0xFFFFFFFF)), ErrorCode::invalid_argument, "LIST limit");
  CHECK(decode_list_request(list_request_payload(1)).ok());
  CHECK(decode_list_request(list_request_payload(1000)).ok());
}

TEST_CASE("messages: a LIST namespace_filter other than 0 or 1 is refused") {
  require_error(decode_list_request(list_request_payload(10, "", 2)), ErrorCode::invalid_argument, "namespace_filter");
}

TEST_CASE("messages: a key id prefix must be 8 to 64 hex digits in LOOKUP, REMOVE and LIST") {
  const std::string seven(7, 'a');
  const std::string eight(8, 'a');
  const std::string sixty_four(64, '0');
  const std::string sixty_five(65, '0');
  const std::string non_hex = "0123456g";

  for (const std::string& prefix : {seven, non_hex, std::string("0123 567"), std::string("-1234567")}) {
    CAPTURE(prefix);
    require_error(decode_remove_request(remove_request_payload(prefix)), ErrorCode::invalid_argument, "key_id_prefix");
    require_error(decode_lookup_request(lookup_by_prefix_payload(prefix)), ErrorCode::invalid_argument,
                  "key_id_prefix");
    require_error(decode_list_request(list_request_payload(10, prefix)), ErrorCode::invalid_argument, "key_id_prefix");
  }
  // Over 64 is over the field's str16 limit, so it is refused before the digits are looked at.
  require_error(decode_remove_request(remove_request_payload(sixty_five)), ErrorCode::too_large, "key_id_prefix");
  require_error(decode_lookup_request(lookup_by_prefix_payload(sixty_five)), ErrorCode::too_large, "key_id_prefix");
  require_error(decode_list_request(list_request_payload(10, sixty_five)), ErrorCode::too_large, "key_id_prefix");

  for (const std::string& prefix : {eight, sixty_four, std::string("0123456789abcdefABCDEF")}) {
    CAPTURE(prefix);
    CHECK(decode_remove_request(remove_request_payload(prefix)).ok());
    CHECK(decode_lookup_request(lookup_by_prefix_payload(prefix)).ok());
    CHECK(decode_list_request(list_request_payload(10, prefix)).ok());
  }
}

TEST_CASE("messages: an empty key id prefix means any in LIST but is refused in LOOKUP and REMOVE") {
  CHECK(decode_list_request(list_request_payload(10, "")).ok());
  require_error(decode_remove_request(remove_request_payload("")), ErrorCode::invalid_argument, "key_id_prefix");
  require_error(decode_lookup_request(lookup_by_prefix_payload("")), ErrorCode::invalid_argument, "key_id_prefix");
}

TEST_CASE("messages: the key id prefix validator accepts exactly 8 to 64 hex digits") {
  CHECK(is_valid_key_id_prefix(std::string(8, 'f')));
  CHECK(is_valid_key_id_prefix(std::string(64, 'F')));
  CHECK_FALSE(is_valid_key_id_prefix(std::string(7, 'f')));
  CHECK_FALSE(is_valid_key_id_prefix(std::string(65, 'f')));
  CHECK_FALSE(is_valid_key_id_prefix("abcdefgh"));
  CHECK_FALSE(is_valid_key_id_prefix(""));
  CHECK(is_valid_key_id_prefix("", true));
  CHECK_FALSE(is_valid_key_id_prefix(std::string("abcd\0efg", 8)));
}

TEST_CASE("messages: a LOOKUP selector other than 0, 1 or 2 is refused with invalid_argument") {
  for (std::uint8_t selector : {std::uint8_t{3}, std::uint8_t{0xFF}}) {
    CAPTURE(selector);
    Payload out;
    ByteWriter w(out);
    w.u8(selector);
    w.str16("0123456789");
    require_error(decode_lookup_request(out), ErrorCode::invalid_argument,
                  "LOOKUP selector " + std::to_string(selector));
  }
}

TEST_CASE("messages: a STATS reply claiming more values than the limit is refused before decoding any") {
  for (std::uint32_t count : {k_max_stats_count + 1, 0xFFFFFFFFu}) {
    CAPTURE(count);
    Payload out;
    ByteWriter w(out);
    w.u32(count);
    require_error(decode_stats_reply(out), ErrorCode::too_large, std::to_string(count));
  }
  // At the limit the count itself is accepted; the missing values are then a truncation.
  Payload at_limit;
  ByteWriter w(at_limit);
  w.u32(k_max_stats_count);
  require_error(decode_stats_reply(at_limit), ErrorCode::invalid_argument, "name");
}

TEST_CASE("messages: a LIST reply claiming more entries than a page holds is refused") {
  Payload out;
  ByteWriter w(out);
  w.u32(k_max_list_limit + 1);
  require_error(decode_list_reply(out), ErrorCode::too_large, "1001");
}

TEST_CASE("messages: a str16 field containing a NUL byte is refused, as PROTOCOL.md forbids NUL in strings") {
  const std::string with_nul("jit\0cache", 9);
  Payload hello;
  ByteWriter hello_writer(hello);
  hello_writer.u16(1);
  hello_writer.u16(1);
  hello_writer.str16(with_nul);
  require_error(decode_hello_request(hello), ErrorCode::invalid_argument, "client_name contains a NUL byte");

  PutRequest put;
  put.key = sample_key();
  put.producer = with_nul;
  require_error(decode_put_request(encode(put)), ErrorCode::invalid_argument, "producer contains a NUL byte");

  put.producer = "nvcc";
  put.key.options = std::string(1, '\0');
  require_error(decode_put_request(encode(put)), ErrorCode::invalid_argument, "options contains a NUL byte");

  require_error(decode_error_message(encode_error_message(with_nul)), ErrorCode::invalid_argument,
                "message contains a NUL byte");
}

TEST_CASE("messages: HIT_NOTE carries one fast key, and nothing else is accepted") {
  HitNoteRequest note;
  note.fast_key = fast_key_of(sample_key(), xxh3_128(as_bytes("ptx")));
  const Payload payload = encode(note);
  Payload fast_key_only;
  ByteWriter w(fast_key_only);
  encode_fast_key(w, note.fast_key);
  CHECK(payload == fast_key_only);
  auto decoded = decode_hit_note_request(Bytes(payload));
  REQUIRE(decoded);
  CHECK(decoded->fast_key == note.fast_key);

  Payload trailing = payload;
  trailing.push_back(0);
  CHECK_FALSE(decode_hit_note_request(Bytes(trailing)));
  CHECK_FALSE(decode_hit_note_request(Bytes(payload).first(payload.size() - 1)));
  CHECK_FALSE(decode_hit_note_request({}));
}

TEST_CASE("messages: a VERIFY reply encodes as integrity, checked, removed, the listed key ids, then duration") {
  VerifyReply m;
  m.integrity = "ok";
  m.entries_checked = 7;
  m.entries_removed = 2;
  m.removed = {VerifiedRemoval{sha256(as_bytes("a")), 0}, VerifiedRemoval{sha256(as_bytes("b")), 1000}};
  m.duration_ms = 12;
  const Payload out = encode(m);
  CHECK(out.size() == 2 + 2 + 8 + 8 + 4 + 2 * (32 + 4) + 8);
  CHECK(out[0] == 2);  // str16 length, little-endian
  CHECK(out[2] == 'o');
  auto decoded = decode_verify_reply(out);
  REQUIRE(decoded.ok());
  CHECK(decoded->integrity == "ok");
  CHECK(decoded->entries_checked == 7);
  CHECK(decoded->entries_removed == 2);
  REQUIRE(decoded->removed.size() == 2);
  CHECK(decoded->removed[1].key_id == sha256(as_bytes("b")));
  CHECK(decoded->removed[1].namespace_id == 1000);
  CHECK(decoded->duration_ms == 12);
}

TEST_CASE("messages: a VERIFY reply listing more removals than it counts or than the limit is refused") {
  auto reply_listing = [](std::uint64_t removed, std::uint32_t listed) {
    Payload out;
    ByteWriter w(out);
    w.str16("ok");
    w.u64(10);
    w.u64(removed);
    w.u32(listed);
    return out;
  };
  require_error(decode_verify_reply(reply_listing(1, 2)), ErrorCode::invalid_argument, "removed");
  require_error(decode_verify_reply(reply_listing(1000, k_max_verify_listed + 1)), ErrorCode::invalid_argument,
                "removed");
  // The encoder lists at most k_max_verify_listed, whatever it is given.
  VerifyReply many;
  many.entries_removed = 500;
  many.removed.resize(500);
  auto decoded = decode_verify_reply(encode(many));
  REQUIRE(decoded.ok());
  CHECK(decoded->removed.size() == k_max_verify_listed);
}
