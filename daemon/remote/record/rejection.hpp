// Why something read from a remote was not served (docs/remote-layout.md "Checks on read"). Each
// is counted per remote (STATS remote<i>.rejected.<name>, metric jitcache_remote_rejections_total
// by reason), logged once per key, and the load goes on as a miss.
// Persisted names and numbers: never renumber, never reuse.
// Thread safety: constants.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace jitcache::daemon::remote {

enum class Rejection : std::uint8_t {
  malformed_record = 0,  // the index record does not parse (garbage, truncated, unknown version)
  unknown_signer = 1,    // signed by a key that is not in remote_trusted_keys
  bad_signature = 2,     // the signature does not verify under the signer's key
  key_mismatch = 3,      // the record's key fields do not hash to the key id (or fast key id) asked for
  image_missing = 4,     // the record names an image the remote does not have
  image_too_large = 5,   // the record or the image object is over remote_max_image
  image_corrupt = 6,     // the image object does not decompress
  image_mismatch = 7,    // the image's SHA-256 or size is not the record's
};

inline constexpr std::size_t k_rejection_count = 8;

inline constexpr std::array<std::string_view, k_rejection_count> k_rejection_names{
    "malformed_record", "unknown_signer",  "bad_signature", "key_mismatch",
    "image_missing",    "image_too_large", "image_corrupt", "image_mismatch",
};

inline std::string_view rejection_name(Rejection r) { return k_rejection_names[static_cast<std::size_t>(r)]; }

// A check that failed: the reason and a sentence for the log.
struct Rejected {
  Rejection reason = Rejection::malformed_record;
  std::string message;
};

}  // namespace jitcache::daemon::remote
