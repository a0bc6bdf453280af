// One request as an op's handler sees it: who sent it, its header flags, its payload, and the file
// descriptor it carried. The connection (daemon/server/connection.cpp) makes one per request and
// keeps it alive until the handler's reply is written.
// Thread safety: one request, one thread at a time (the handler runs on its lane while the
// connection waits for it).
#pragma once

#include <cstdint>
#include <vector>

#include <common/unique_fd.hpp>
#include <daemon/policy/peer_credentials.hpp>
#include <daemon/policy/request_bytes_budget.hpp>
#include <proto/digest.hpp>
#include <proto/wire.hpp>

namespace jitcache::daemon::ops {

struct OpCall {
  proto::Op op = proto::Op::none;
  std::uint16_t flags = 0;  // the request header's (PROTOCOL.md §2 "Header flags")
  policy::PeerCredentials peer;
  // The request's bytes. A handler that keeps them past its reply (COMPILE, which waits for the
  // compile service) moves them out; `payload` views them until then.
  std::vector<std::uint8_t>& bytes;
  proto::Bytes payload;
  // What the request reserved of the request bytes budget; a handler that holds the request for
  // long after it has taken what it needs gives it back early (COMPILE).
  policy::RequestBytesBudget::Hold& budget;
  // The descriptor the request carried (header flag request_fd), or none.
  common::UniqueFd descriptor;
};

}  // namespace jitcache::daemon::ops
