// Result<T>: a value or an Error, returned at every IPC, store and driver boundary.
//
// Exceptions are reserved for "cannot start" in main(); everything a running daemon or a client
// library meets at run time (bad frames, full disks, dead peers) travels as an Error value so
// that no failure can unwind through a request loop or across the C API.
//
// JITCACHE_TRY and JITCACHE_TRY_ASSIGN (at the end) pass a failure on to the caller in one line.
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
  io,  // a system call failed (socket, file)
  timeout,
  unavailable,  // the peer is absent or not ready
  corrupt,      // stored or received bytes fail their checksum or structure
  no_space,     // a disk or quota is full
  unsupported,  // well-formed, but not something this build can do
  forbidden,    // the caller may not do this (the daemon's `forbidden`: a trusted caller's op)
  internal,     // stays last: k_error_code_count counts up to it
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

  T& value() & {
    assert(ok());
    return std::get<0>(m_state);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(m_state);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(m_state));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const& {
    assert(!ok());
    return std::get<1>(m_state);
  }
  Error&& error() && {
    assert(!ok());
    return std::get<1>(std::move(m_state));
  }

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
  const Error& error() const& {
    assert(m_failed);
    return m_error;
  }
  Error&& error() && {
    assert(m_failed);
    return std::move(m_error);
  }

 private:
  Error m_error;
  bool m_failed = false;
};

}  // namespace jitcache::common

// JITCACHE_TRY(expr): evaluates expr, a Result of any type, once; when it failed, returns its Error
// from the enclosing function (which returns a Result of any type), else goes on. The value of a
// successful Result<T> is dropped: take it with JITCACHE_TRY_ASSIGN. Not for coroutines, which
// co_return.
//
//   JITCACHE_TRY(reader.expect_end("PUT"));
#define JITCACHE_TRY(expr)                                                                                        \
  do {                                                                                                            \
    auto&& jitcache_try_result_ = (expr);                                                                         \
    if (!jitcache_try_result_) return std::forward<decltype(jitcache_try_result_)>(jitcache_try_result_).error(); \
  } while (false)

// JITCACHE_TRY_ASSIGN(target, expr): evaluates expr, a Result<T>, once; when it failed, returns its
// Error from the enclosing function, else moves its value into target (copies it when expr names a
// Result that outlives the statement): a declaration (`auto length`, `std::string name`) or
// something assignable. Being two statements, it cannot be the body of an unbraced if or loop.
//
//   JITCACHE_TRY_ASSIGN(auto length, reader.u16("length"));
//
// Rationale: two macros, because one that also yields the value would need a statement expression
// (GCC's `({ ... })`), which -Wpedantic refuses.
#define JITCACHE_TRY_ASSIGN(target, expr) \
  JITCACHE_TRY_ASSIGN_WITH_(JITCACHE_TRY_CONCAT_(jitcache_try_value_, __COUNTER__), target, expr)

// NOLINTBEGIN(bugprone-macro-parentheses): target is a declaration, result a name the macro made.
#define JITCACHE_TRY_CONCAT_INNER_(a, b) a##b
#define JITCACHE_TRY_CONCAT_(a, b) JITCACHE_TRY_CONCAT_INNER_(a, b)
#define JITCACHE_TRY_ASSIGN_WITH_(result, target, expr)               \
  auto&& result = (expr);                                             \
  if (!result) return std::forward<decltype(result)>(result).error(); \
  target = std::forward<decltype(result)>(result).value()
// NOLINTEND(bugprone-macro-parentheses)
