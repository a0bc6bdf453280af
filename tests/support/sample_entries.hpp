// Keys and images for tests that talk to a real daemon: deterministic, valid, and distinct per seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <proto/key.hpp>
#include <proto/messages.hpp>

namespace jitcache::testing {

// A valid key whose content digest is that of "source <seed>".
proto::KeyFields sample_key(std::uint64_t seed);
// The XXH3-128 of "source <seed>" (the fast key's content), and sample_key(seed)'s fast key.
proto::Checksum128 sample_content_fast(std::uint64_t seed);
proto::FastKey sample_fast_key(std::uint64_t seed);
// An sm_90 cubin (sample_cubin.hpp) of max(size, min_cubin_size()) bytes, its code from `seed`.
std::vector<std::uint8_t> sample_image(std::uint64_t seed, std::size_t size);
// A PUT request for sample_key(seed) with `image` and sample_content_fast(seed) (the request views
// `image`: keep it alive).
proto::PutRequest sample_put(std::uint64_t seed, const std::vector<std::uint8_t>& image);

}  // namespace jitcache::testing
