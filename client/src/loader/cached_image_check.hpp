// The last check before a cached image reaches the driver. cuModuleLoadData takes no size, and a
// truncated or damaged cubin can crash the driver rather than fail (docs/driver-facts.md §0.1), so a hit is
// loaded only when: the reply is for the key we asked, the bytes have the size and XXH3-128 the
// entry records (the hash is skipped when the transport already checked it), and they form a whole
// 64-bit CUDA ELF (magic, class, EM_CUDA, and every header, section and segment inside the received
// bytes).
// Thread safety: pure function.
#pragma once

#include <client/src/transport/daemon_client.hpp>
#include <common/result.hpp>

namespace jitcache::client::loader {

// ErrorCode::corrupt naming the first check that failed.
common::Result<void> check_cached_image(const transport::FetchedImage& fetched, const proto::KeyFields& asked);

}  // namespace jitcache::client::loader
