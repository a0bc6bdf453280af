// Payload bytes of requests the daemon is receiving or holding at once, against
// request_bytes_per_uid and request_bytes_total (docs/security.md "Limits"). A connection reserves
// a request's declared length when its header arrives, before a byte of the payload is read or
// allocated, and gives it back when the request no longer needs its bytes; a request over either
// budget is answered `busy` and its payload is read and dropped.
//
// Rationale: a header costs the sender 24 bytes and used to make the daemon allocate up to
// max_frame_bytes at once (16 header-only connections: 10 -> 1 035 MiB). Reserving the declared
// length, not the bytes that have arrived, keeps a uid from promising more than it may send even
// while it sends nothing; buffers still grow only as bytes arrive (server/connection.cpp).
// Thread safety: every method may be called from any thread (one mutex).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace jitcache::daemon::policy {

class RequestBytesBudget {
 public:
  enum class Refusal { none, per_uid, total };

  // 0 for either: no limit of that kind.
  RequestBytesBudget(std::uint64_t per_uid, std::uint64_t total) : m_per_uid(per_uid), m_total_limit(total) {}

  // Takes `bytes` for `uid`, or refuses and takes nothing.
  Refusal try_reserve(uid_t uid, std::uint64_t bytes);
  void release(uid_t uid, std::uint64_t bytes);

  // A reservation given back when it is destroyed or reset (a connection's current request).
  class Hold {
   public:
    Hold() = default;
    Hold(RequestBytesBudget& budget, uid_t uid, std::uint64_t bytes) : m_budget(&budget), m_uid(uid), m_bytes(bytes) {}
    Hold(Hold&& other) noexcept { *this = std::move(other); }
    Hold& operator=(Hold&& other) noexcept;
    ~Hold() { reset(); }
    void reset();
    std::uint64_t bytes() const { return m_bytes; }

   private:
    RequestBytesBudget* m_budget = nullptr;
    uid_t m_uid = 0;
    std::uint64_t m_bytes = 0;
  };

  std::uint64_t reserved(uid_t uid) const;
  std::uint64_t reserved_total() const;
  std::uint64_t per_uid_limit() const { return m_per_uid; }
  std::uint64_t total_limit() const { return m_total_limit; }

 private:
  const std::uint64_t m_per_uid;
  const std::uint64_t m_total_limit;
  mutable std::mutex m_mutex;
  std::unordered_map<uid_t, std::uint64_t> m_by_uid;
  std::uint64_t m_total = 0;
};

}  // namespace jitcache::daemon::policy
