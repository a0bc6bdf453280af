// Sampled re-verification (remote_verify_sample) with real parts: a builder daemon compiles and
// uploads to a real redis-server; a consumer that re-verifies every remote hit compiles it again
// with its own compile worker and compares. An honest entry passes; an entry a trusted key signed
// over other bytes (a compromised or broken builder) is still served once, then found out: counted,
// quarantined on that host and not served again.
#include <catch2/catch.hpp>

#include <thread>

#include <daemon/remote/record/image_object.hpp>
#include <daemon/remote/record/index_record.hpp>
#include <daemon/remote/record/index_record_codec.hpp>
#include <daemon/remote/redis/redis_backend.hpp>
#include <daemon/remote/redis/redis_settings.hpp>
#include <proto/content_digest.hpp>
#include <tests/support/eventually.hpp>
#include <tests/support/fleet_hosts.hpp>
#include <tests/support/redis_server.hpp>

using namespace jitcache;
using namespace jitcache::testing;
using namespace std::chrono_literals;
namespace remote = jitcache::daemon::remote;

namespace {

bool served(FleetHost& host, const proto::KeyFields& key) {
  auto client = host.daemon->client();
  auto found = client.lookup(key);
  REQUIRE(found.ok());
  return found->has_value();
}

// What the builder uploaded for `key`, replaced by other bytes under a record signed again with the
// builder's own (trusted) key: everything a reader checks holds, only the compile is wrong.
void replace_image_signed(const std::string& url, const proto::KeyFields& key, const proto::SigningKey& signer) {
  auto settings = remote::parse_redis_url(url);
  REQUIRE(settings.ok());
  auto backend = remote::make_redis_backend(std::move(*settings));
  const auto deadline = [] { return remote::Clock::now() + 2s; };
  const std::string idx = proto::to_hex(proto::key_id(key));
  auto bytes = backend->get({"idx", idx}, remote::k_max_index_record_bytes, deadline());
  REQUIRE(bytes.ok());
  REQUIRE(bytes->has_value());
  auto parsed = remote::parse_index_record(**bytes);
  REQUIRE(std::holds_alternative<remote::ParsedIndexRecord>(parsed));
  remote::IndexRecord record = std::get<remote::ParsedIndexRecord>(parsed).record;
  auto image = backend->get({"img", proto::to_hex(record.image_digest)}, 64 << 20, deadline());
  REQUIRE(image.ok());
  REQUIRE(image->has_value());
  auto raw = remote::decode_image_object(**image, record);
  REQUIRE(std::holds_alternative<std::vector<std::uint8_t>>(raw));
  std::vector<std::uint8_t> forged = std::get<std::vector<std::uint8_t>>(raw);
  forged[forged.size() / 2] ^= 0x40;
  const std::string object = remote::encode_image_object(proto::Bytes(forged));
  record.image_digest = remote::image_digest(proto::Bytes(forged));
  record.object_size = object.size();
  const std::string signed_record = remote::encode_signed_record(record, signer);
  REQUIRE(backend->put({"img", proto::to_hex(record.image_digest)}, object, 0ms, deadline()).ok());
  REQUIRE(backend->put({"idx", idx}, signed_record, 0ms, deadline()).ok());
  const std::string fk = proto::to_hex(proto::fast_key_id(proto::fast_key_of(key, record.content_fast)));
  REQUIRE(backend->put({"fk", fk}, signed_record, 0ms, deadline()).ok());
}

}  // namespace

TEST_CASE(
    "remote verification: an honest entry passes, and one signed over other bytes is quarantined after one load") {
  RedisServer redis;
  FleetKeys keys;
  const std::string url = redis.url() + "/0";
  FleetHost builder = start_fleet_host(url, keys, true, {"--remote-upload-source"});
  const std::string ptx = read_file(std::string(JITCACHE_TEST_DATA_DIR) + "/small_kernel.ptx");
  const proto::CompileRequest request = fleet_compile_request(ptx);
  const proto::KeyFields key = proto::key_of(request, proto::content_digest(request.ptx));
  {
    auto client = builder.daemon->client();
    auto compiled = client.compile(request, 120s);
    REQUIRE(compiled.ok());
    REQUIRE(compiled->kind == client::transport::CompileAnswer::Kind::compiled);
  }
  REQUIRE(eventually([&] { return host_stat(builder, "remote0.uploads") == 1; }, 60s));

  FleetHost honest = start_fleet_host(url, keys, false, {"--remote-verify-sample", "1"});
  CHECK(served(honest, key));
  REQUIRE(eventually([&] { return host_stat(honest, "remote0.verify_samples") == 1; }, 60s));
  CHECK(host_stat(honest, "remote0.verify_mismatches") == 0);
  CHECK(served(honest, key));

  auto signer = proto::SigningKey::load(keys.private_path);
  REQUIRE(signer.ok());
  replace_image_signed(url, key, *signer);
  FleetHost fooled = start_fleet_host(url, keys, false, {"--remote-verify-sample", "1"});
  CHECK(served(fooled, key));  // every check a reader can make holds
  REQUIRE(eventually([&] { return host_stat(fooled, "remote0.verify_mismatches") == 1; }, 60s));
  CHECK(host_stat(fooled, "entries_quarantined") == 1);
  CHECK_FALSE(served(fooled, key));
  CHECK_THAT(read_file(fooled.daemon->log_path()), Catch::Contains(proto::signer_hex(signer->public_key().id())));
}
