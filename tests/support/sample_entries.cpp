#include <tests/support/sample_entries.hpp>

#include <tests/support/sample_cubin.hpp>

#include <proto/jit_options.hpp>

namespace jitcache::testing {

proto::KeyFields sample_key(std::uint64_t seed) {
  proto::KeyFields key;
  key.content = proto::content_digest(proto::as_bytes("source " + std::to_string(seed)));
  key.arch = "sm_90";
  key.driver_api = 13000;
  key.driver_build = "580.159.04";
  key.options = proto::default_option_text();
  return key;
}

proto::Checksum128 sample_content_fast(std::uint64_t seed) {
  return proto::xxh3_128(proto::as_bytes("source " + std::to_string(seed)));
}

proto::FastKey sample_fast_key(std::uint64_t seed) {
  return proto::fast_key_of(sample_key(seed), sample_content_fast(seed));
}

std::vector<std::uint8_t> sample_image(std::uint64_t seed, std::size_t size) {
  return make_cubin(CubinSpec{}, seed, size);
}

proto::PutRequest sample_put(std::uint64_t seed, const std::vector<std::uint8_t>& image) {
  proto::PutRequest request;
  request.key = sample_key(seed);
  request.producer = "test";
  request.compile_time_us = 1234;
  request.image = proto::Bytes(image);
  request.content_fast = sample_content_fast(seed);
  return request;
}

}  // namespace jitcache::testing
