#include "sample_entries.hpp"

#include <random>

#include <jitcache/proto/jit_options.hpp>

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

std::vector<std::uint8_t> sample_image(std::uint64_t seed, std::size_t size) {
  std::mt19937_64 random(seed * 0x9E3779B97F4A7C15ull + size);
  std::vector<std::uint8_t> image(size);
  for (auto& b : image) b = static_cast<std::uint8_t>(random());
  return image;
}

proto::PutRequest sample_put(std::uint64_t seed, const std::vector<std::uint8_t>& image) {
  proto::PutRequest request;
  request.key = sample_key(seed);
  request.producer = "test";
  request.compile_time_us = 1234;
  request.image = proto::Bytes(image);
  return request;
}

}  // namespace jitcache::testing
