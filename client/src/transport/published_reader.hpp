// Reads a published image (proto/published_image.hpp) from the directory jitcached keeps beside
// its socket, so that a hit needs no round trip (docs/architecture.md "Published images").
//
// Nothing about the file is trusted until checked: the socket beside it must be one the client
// would speak to (daemon_trust.hpp: its whole path, the socket included, belongs to trusted uids,
// which covers every directory on the way to the published directory too, a sibling of the
// socket), the directory and the file must be owned by the socket's owner (the daemon's uid) or
// root and writable by nobody else (no group or other write bit), the file must be a regular file
// (opened with O_NOFOLLOW) no larger than a LOOKUP reply may be, carry the right magic and version,
// decode with the LOOKUP reply decoder, name the fast key asked for, and hold an image of the size
// and XXH3-128 its entry records. What this does not check
// is the caller's: the entry's key (its content digest above all) against the caller's own, and
// the ELF checks (loader/cached_image_check.hpp), exactly as for a socket hit. The file is read into
// the process's own memory, never mapped: the daemon's uid (or root) could still write the file in
// place, and a mapping would then change, or fault with SIGBUS, after the checks.
// Thread safety: a pure function over the file system.
#pragma once

#include <optional>
#include <string>

#include <client/src/transport/daemon_client.hpp>
#include <client/src/transport/daemon_trust.hpp>
#include <proto/key.hpp>

namespace jitcache::client::transport {

// nullopt: no published file for this fast key (no directory, no file, no socket to vouch for the
// directory's owner, or a socket the client may not use, which the connection then reports): not a
// rejection, just nothing published. An error (ErrorCode::corrupt, or
// io for a read that failed) when a file is there but may not be used; the caller falls back to
// the socket and counts it.
Result<std::optional<FetchedImage>> read_published(const std::string& socket_path, const DaemonTrust& trust,
                                                   const proto::FastKey& fast_key, const proto::Digest256& fast_key_id);

}  // namespace jitcache::client::transport
