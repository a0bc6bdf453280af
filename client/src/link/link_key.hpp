// The key of a link session (docs/cache-key.md "Link sessions"): the content digest of its ordered
// inputs (proto/link_content.hpp), the arch, the linker's identity in the driver field (the driver
// for cuLink*, the nvJitLink library for nvJitLink), and the link's option string, which marks it as
// a link (proto/jit_options.hpp link_flavor). Both session kinds build their keys here.
// Thread safety: pure function.
#pragma once

#include <span>
#include <string>

#include <client/src/link/link_input.hpp>
#include <common/result.hpp>
#include <proto/key.hpp>

namespace jitcache::client::link {

struct LinkKey {
  proto::KeyFields fields;
  proto::Checksum128 content_fast;
  proto::FastKey fast() const { return proto::fast_key_of(fields, content_fast); }
};

// Hashes every input (SHA-256 based, and XXH3-128 for the fast key) and validates the key as the
// daemon will (proto::validate_key): an error (ErrorCode::invalid_argument) means the session cannot
// be keyed, e.g. options longer than a key holds.
common::Result<LinkKey> build_link_key(std::span<const LinkInput> inputs, std::string arch, proto::DriverId linker,
                                       std::string options);

}  // namespace jitcache::client::link
