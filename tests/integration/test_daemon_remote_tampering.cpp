// Tampered entries in a real remote, read by a real consumer (issue: a kernel compiles once per
// fleet, "Tampering, each rejected, counted and never served"). A real redis-server holds, under the
// key id of one COMPILE request (tests/data/small_kernel.ptx), an entry that someone with write
// access to Redis altered: a wrong signature, an unknown signer, key fields swapped between two
// records, an image digest that is not the image's, a truncated or replaced image object, a valid
// record replayed under another key id (tests/support/remote_records.hpp makes them; the order of
// the checks is docs/remote-layout.md "Checks on read"). For each, the consumer's LOOKUP misses,
// STATS counts one rejection under that reason and nothing else (remote0.rejected.<reason>,
// proto/PROTOCOL.md), remote0.hits stays 0, the rejection is logged once however often the key is
// asked for, and the COMPILE that follows compiles it here with the real jitcache-compile worker
// (nvJitLink, no GPU) and serves that image, never the planted one. An untampered entry planted the
// same way is served: the planting is what the daemon reads.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <daemon/remote/record/image_object.hpp>
#include <daemon/remote/record/index_record.hpp>
#include <daemon/remote/record/index_record_codec.hpp>
#include <daemon/remote/record/rejection.hpp>
#include <daemon/remote/redis/redis_backend.hpp>
#include <daemon/remote/redis/redis_settings.hpp>
#include <daemon/remote/remote_names.hpp>
#include <proto/compile_messages.hpp>
#include <proto/content_digest.hpp>
#include <proto/signing.hpp>
#include <tests/support/eventually.hpp>
#include <tests/support/fleet_hosts.hpp>
#include <tests/support/redis_server.hpp>
#include <tests/support/remote_records.hpp>
#include <tests/support/sample_entries.hpp>

using namespace jitcache;
using namespace jitcache::testing;
using namespace std::chrono_literals;
using client::transport::CompileAnswer;
namespace remote = jitcache::daemon::remote;

namespace {

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++count;
  return count;
}

bool same_bytes(proto::Bytes bytes, const std::vector<std::uint8_t>& image) {
  return bytes.size() == image.size() && std::equal(bytes.begin(), bytes.end(), image.begin());
}

// A real Redis, the builder's key pair (its private key signs what the test plants, as the
// builder's daemon would), and a consumer daemon that trusts the builder's public key. The request
// is small_kernel.ptx's COMPILE; `entry` is a builder's honest entry for its key (a sample cubin as
// its image, so that a planted image served is told from the one the consumer compiles).
struct TamperingFleet {
  RedisServer redis;
  std::string url = redis.url() + "/0";
  FleetKeys keys;
  proto::SigningKey builder = load_key(keys.private_path);
  std::string ptx = read_file(std::string(JITCACHE_TEST_DATA_DIR) + "/small_kernel.ptx");
  proto::CompileRequest request = fleet_compile_request(ptx);
  proto::KeyFields key = proto::key_of(request, proto::content_digest(request.ptx));
  RemoteEntry entry = entry_for(key, proto::xxh3_128(request.ptx), 11);
  // Another builder's honest entry, for another key: the source of swapped fields and replays.
  RemoteEntry other = sample_remote_entry(12);
  std::unique_ptr<remote::RedisBackend> backend = backend_for(url);
  // Rationale: 1 s, not the default tens of ms: a fetch that timed out on a busy CI host would be a
  // miss without a rejection, and fail the test for the wrong reason. Rejections do not wait.
  FleetHost consumer = start_fleet_host(url, keys, /*builder=*/false, {"--remote-timeout", "1s"});

  static proto::SigningKey load_key(const std::string& path) {
    auto key = proto::SigningKey::load(path);
    if (!key) throw std::runtime_error("loading the builder's key: " + key.error().message);
    return std::move(*key);
  }
  static std::unique_ptr<remote::RedisBackend> backend_for(const std::string& url) {
    auto settings = remote::parse_redis_url(url);
    if (!settings) throw std::runtime_error("parsing " + url + ": " + settings.error().message);
    return remote::make_redis_backend(std::move(*settings));
  }
  // sample_remote_entry(image_seed)'s image and sizes under `key` and its fast key's content.
  static RemoteEntry entry_for(const proto::KeyFields& key, const proto::Checksum128& content_fast,
                               std::uint64_t image_seed) {
    RemoteEntry made = sample_remote_entry(image_seed);
    made.record.key = key;
    made.record.content_fast = content_fast;
    return made;
  }

  // Writes `value` into Redis as the tier names it (the daemon's own key names: the same backend).
  void plant(std::string_view space, const std::string& id, const std::string& value) {
    auto done = backend->put({space, id}, value, 0ms, remote::Clock::now() + 5s);
    INFO((done ? std::string() : done.error().message));
    REQUIRE(done.ok());
  }
  // `record` under the request's key id, as a LOOKUP and a COMPILE read it.
  void plant_record(const std::string& record) { plant(remote::k_space_index, entry.idx_id(), record); }
  void plant_image(const RemoteEntry& of) { plant(remote::k_space_image, of.img_id(), of.object); }
};

std::uint64_t all_rejections(FleetHost& host) {
  std::uint64_t sum = 0;
  for (const auto name : remote::k_rejection_names) sum += host_stat(host, "remote0.rejected." + std::string(name));
  return sum;
}

// What every tampering must come to: the consumer asked for the request's key is not served what
// was planted (`planted`: the image a careless reader would serve), counts one rejection under
// `reason` and no other, logs it once however often it is asked, and compiles the kernel itself.
void check_rejected(TamperingFleet& f, const std::string& reason, const std::vector<std::uint8_t>& planted) {
  FleetHost& consumer = f.consumer;
  auto client = consumer.daemon->client();
  auto first = client.lookup(f.key);
  REQUIRE(first.ok());
  CHECK_FALSE(first->has_value());
  CHECK(host_stat(consumer, "remote0.lookups") == 1);
  CHECK(host_stat(consumer, "remote0.rejected." + reason) == 1);
  CHECK(all_rejections(consumer) == 1);  // caught by that check, not an earlier or a later one
  CHECK(host_stat(consumer, "remote0.hits") == 0);

  // Asked again (a client retrying, another process loading it): refused and counted again, and
  // not logged again.
  auto second = client.lookup(f.key);
  REQUIRE(second.ok());
  CHECK_FALSE(second->has_value());
  CHECK(host_stat(consumer, "remote0.rejected." + reason) == 2);
  const std::string logged = "not serving idx " + f.entry.idx_id();
  CHECK(eventually([&] { return occurrences(read_file(consumer.daemon->log_path()), logged) >= 1; }));
  const std::string log = read_file(consumer.daemon->log_path());
  CHECK(occurrences(log, logged) == 1);
  CHECK_THAT(log, Catch::Contains(logged + ": " + reason));

  // The miss goes on to a compile here, whose image is served, not the planted one.
  auto compiled = client.compile(f.request, 120s);
  INFO((compiled ? std::string() : compiled.error().message));
  REQUIRE(compiled.ok());
  REQUIRE(compiled->kind == CompileAnswer::Kind::compiled);
  REQUIRE(compiled->image.has_value());
  CHECK_FALSE(compiled->from_store);
  const proto::Bytes image = compiled->image->bytes();
  REQUIRE(image.size() > 4);
  CHECK(std::string_view(reinterpret_cast<const char*>(image.data()), 4) == "\177ELF");  // a cubin
  CHECK_FALSE(same_bytes(image, planted));
  CHECK(host_stat(consumer, "compiles") == 1);
  CHECK(host_stat(consumer, "remote0.hits") == 0);
  CHECK(occurrences(read_file(consumer.daemon->log_path()), logged) == 1);  // the COMPILE's lookup neither
  // Stored here now: the next LOOKUP is a local hit with the compiled bytes.
  auto after = client.lookup(f.key);
  REQUIRE(after.ok());
  REQUIRE(after->has_value());
  CHECK(same_bytes((*after)->bytes(), std::vector<std::uint8_t>(image.begin(), image.end())));
  CHECK(consumer.daemon->running());
}

}  // namespace

TEST_CASE("remote tampering: an untampered entry planted the same way is served, from the remote, compiling nothing") {
  TamperingFleet f;
  f.plant_image(f.entry);
  f.plant_record(signed_record(f.entry, f.builder));
  auto client = f.consumer.daemon->client();
  auto found = client.lookup(f.key);
  REQUIRE(found.ok());
  REQUIRE(found->has_value());
  CHECK(same_bytes((*found)->bytes(), f.entry.image));
  CHECK(host_stat(f.consumer, "remote0.hits") == 1);
  CHECK(all_rejections(f.consumer) == 0);
  CHECK(host_stat(f.consumer, "compiles") == 0);
}

TEST_CASE("remote tampering: a record whose signature was altered is rejected as bad_signature and compiled here") {
  TamperingFleet f;
  f.plant_image(f.entry);
  const std::string record = signed_record(f.entry, f.builder);
  f.plant_record(flip_bit(record, (record.size() - 10) * 8 + 3));  // a bit inside the signature
  check_rejected(f, "bad_signature", f.entry.image);
}

TEST_CASE("remote tampering: a record signed by a key the consumer does not trust is rejected as unknown_signer") {
  TamperingFleet f;
  const proto::SigningKey stranger = proto::SigningKey::generate();
  f.plant_image(f.entry);
  f.plant_record(signed_record(f.entry, stranger));
  check_rejected(f, "unknown_signer", f.entry.image);
}

TEST_CASE(
    "remote tampering: another entry's record given this key's fields under its own signature is rejected as "
    "bad_signature") {
  // The dangerous swap: the fields now name the key asked for, so only the signature tells that the
  // builder signed them for another key (and its image).
  TamperingFleet f;
  const std::string other_record = signed_record(f.other, f.builder);
  remote::IndexRecord swapped = f.other.record;
  swapped.key = f.entry.record.key;
  swapped.content_fast = f.entry.record.content_fast;
  f.plant_image(f.other);
  f.plant_record(with_fields_of(swapped, other_record));
  check_rejected(f, "bad_signature", f.other.image);
}

TEST_CASE(
    "remote tampering: this key's record given another entry's key fields and signed again by the trusted key is "
    "rejected as key_mismatch") {
  // Signed again, the signature holds; the key fields hash to the other key's id, not to the id the
  // record is stored under.
  TamperingFleet f;
  remote::IndexRecord swapped = f.entry.record;
  swapped.key = f.other.record.key;
  swapped.content_fast = f.other.record.content_fast;
  f.plant_image(f.entry);
  f.plant_record(resign_record(with_fields_of(swapped, signed_record(f.entry, f.builder)), f.builder));
  check_rejected(f, "key_mismatch", f.entry.image);
}

TEST_CASE("remote tampering: a valid record of another key replayed under this key's id is rejected as key_mismatch") {
  TamperingFleet f;
  f.plant_image(f.other);
  f.plant_record(signed_record(f.other, f.builder));
  check_rejected(f, "key_mismatch", f.other.image);
}

TEST_CASE(
    "remote tampering: a signed record naming an image digest its image object does not have is rejected as "
    "image_mismatch") {
  // The object stored under the digest the record names decompresses, to the record's sizes, into
  // bytes whose SHA-256 is another: only the digest check tells.
  TamperingFleet f;
  RemoteEntry named = f.entry;
  named.record.image_digest = remote::image_digest(proto::Bytes(sample_image(99, f.entry.image.size())));
  f.plant(remote::k_space_image, named.img_id(), f.entry.object);
  f.plant_record(signed_record(named, f.builder));
  check_rejected(f, "image_mismatch", f.entry.image);
}

TEST_CASE("remote tampering: a truncated image object is rejected as image_corrupt") {
  TamperingFleet f;
  f.plant(remote::k_space_image, f.entry.img_id(), f.entry.object.substr(0, f.entry.object.size() / 2));
  f.plant_record(signed_record(f.entry, f.builder));
  check_rejected(f, "image_corrupt", f.entry.image);
}

TEST_CASE("remote tampering: an image object replaced by another valid image is rejected as image_mismatch") {
  // Another image of the same size, as a whole valid zstd frame, under the honest record's digest.
  TamperingFleet f;
  const std::vector<std::uint8_t> replacement = sample_image(99, f.entry.image.size());
  REQUIRE_FALSE(replacement == f.entry.image);
  f.plant(remote::k_space_image, f.entry.img_id(), remote::encode_image_object(proto::Bytes(replacement)));
  f.plant_record(signed_record(f.entry, f.builder));
  check_rejected(f, "image_mismatch", replacement);
}
