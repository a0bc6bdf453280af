// Which entries jitcached publishes as read-only files beside its socket (docs/architecture.md
// "Published images"): the rule in one place, so that it can be tested without a second uid.
//
// Only entries every client may already be served are published: the shared namespace (compiled by
// the daemon, or PUT by a trusted uid; docs/security.md "What is enforced"), live, with a
// fast key (the file is named by it and the client finds it by it), and no larger than
// publish_max_image.
// Thread safety: pure function.
#pragma once

#include <cstdint>
#include <string_view>

#include <proto/messages.hpp>

namespace jitcache::daemon::publish {

enum class PublishVerdict {
  publish,
  not_shared,   // a uid's own namespace: other clients must never see it
  quarantined,  // a client reported that it fails to load
  no_fast_key,  // stored without content_fast: no client could find the file
  too_large,    // over publish_max_image
};

PublishVerdict publish_verdict(const proto::EntryInfo& info, bool has_fast_key, std::uint64_t max_image_bytes);
std::string_view verdict_name(PublishVerdict verdict);

}  // namespace jitcache::daemon::publish
