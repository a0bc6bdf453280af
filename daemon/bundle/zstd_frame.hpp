// One zstd frame of a bundle (an image or a source), checked before anything is allocated for what
// it decodes to: its header must record its content size, that size must be the declared one and
// within the limit, and the frame must end exactly where its field ends.
// Thread safety: free functions; each call uses its own zstd context.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <common/result.hpp>
#include <proto/digest.hpp>

namespace jitcache::daemon::bundle {

// ErrorCode::corrupt naming `what` ("image", "source") and the check that failed.
common::Result<void> check_zstd_frame(proto::Bytes frame, std::uint64_t declared_size, std::uint64_t limit,
                                      const std::string& what);
// check_zstd_frame, then the decoded bytes (exactly declared_size of them).
common::Result<std::vector<std::uint8_t>> decode_zstd_frame(proto::Bytes frame, std::uint64_t declared_size,
                                                            std::uint64_t limit, const std::string& what);
// One frame recording its content size; for the writer's tests and for sources.
std::vector<std::uint8_t> encode_zstd_frame(proto::Bytes raw, int level);

}  // namespace jitcache::daemon::bundle
