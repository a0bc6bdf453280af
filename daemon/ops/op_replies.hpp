// What every op's handler answers with: a store or decode failure as its status (logged when the
// daemon is at fault), and an encoded message as an ok reply.
// Thread safety: pure functions.
#pragma once

#include <string_view>

#include <common/result.hpp>
#include <daemon/ops/reply.hpp>
#include <proto/messages.hpp>

namespace jitcache::daemon::ops {

// The reply for a failed store or decode call; `context` names the op in the log.
Reply failure(const common::Error& error, std::string_view context);

// `encode` is found by argument-dependent lookup where the template is used, so a message of any
// proto header (explain_messages.hpp, remote_check_messages.hpp, ...) encodes without this header
// including them all.
template <class T>
Reply ok_payload(const T& message) {
  return Reply{proto::Status::ok, encode(message), nullptr, false};
}

}  // namespace jitcache::daemon::ops
