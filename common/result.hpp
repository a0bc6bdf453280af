// Result<T>: a value or an Error, returned at every IPC, store and driver boundary.
//
// Exceptions are reserved for "cannot start" in main(); everything a running daemon or a client
// library meets at run time (bad frames, full disks, dead peers) travels as an Error value so
// that no failure can unwind through a request loop or across the C API.
// Thread safety: plain values, no shared state.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace jitcache::common {

// Why something failed, coarse enough to decide what to do next. Messages carry the detail.
enum class ErrorCode {
  invalid_argument,  // the caller's input is malformed or out of range
  too_large,         // a size limit was exceeded
  not_found,
  io,                // a system call failed (socket, file)
  timeout,
  unavailable,       // the peer is absent or not ready
  corrupt,           // stored or received bytes fail their checksum or structure
  no_space,          // a disk or quota is full
  unsupported,       // well-formed, but not something this build can do
  forbidden,         // the caller may not do this (the daemon's `forbidden`: a trusted caller's op)
  internal,          // stays last: k_error_code_count counts up to it
};
// How many ErrorCodes there are, for tables that must cover each (proto/status_codes.hpp).
inline constexpr std::size_t k_error_code_count = static_cast<std::size_t>(ErrorCode::internal) + 1;

struct Error {
  ErrorCode code = ErrorCode::internal;
  std::string message;
  // Non-zero when the daemon answered with this status (proto::Status): the peer is alive and
  // refused or failed, as opposed to being unreachable or unreadable.
  std::uint16_t reply_status = 0;
};

inline Error make_error(ErrorCode code, std::string message) { return Error{code, std::move(message)}; }

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : m_state(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : m_state(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return m_state.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(m_state); }
  const T& value() const& { assert(ok()); return std::get<0>(m_state); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(m_state)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { assert(!ok()); return std::get<1>(m_state); }

 private:
  std::variant<T, Error> m_state;
};

// Result<void>: success or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : m_error(std::move(error)), m_failed(true) {}

  bool ok() const { return !m_failed; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { assert(m_failed); return m_error; }

 private:
  Error m_error;
  bool m_failed = false;
};

}  // namespace jitcache::common
