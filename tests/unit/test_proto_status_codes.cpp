// The one table between reply statuses and ErrorCodes (proto/status_codes.hpp): every status and
// every code is covered, and a failure keeps its meaning when it crosses the socket — the daemon
// answers with status_for, the client reads it back with error_code_for.
#include <catch2/catch.hpp>

#include <cstddef>
#include <string>

#include <proto/status_codes.hpp>

using namespace jitcache::proto;
using namespace jitcache::common;

namespace {

Status status_number(std::size_t n) { return static_cast<Status>(n); }
ErrorCode code_number(std::size_t n) { return static_cast<ErrorCode>(n); }

std::size_t rows_reading_status(Status status) {
  std::size_t rows = 0;
  for (const StatusCodeRow& row : k_status_codes)
    rows += row.status == status && row.mapping != StatusMapping::to_status;
  return rows;
}

std::size_t rows_reading_code(ErrorCode code) {
  std::size_t rows = 0;
  for (const StatusCodeRow& row : k_status_codes) rows += row.code == code && row.mapping != StatusMapping::to_code;
  return rows;
}

}  // namespace

TEST_CASE("status codes: every status but ok, and every error code, is read by exactly one row") {
  CHECK(rows_reading_status(Status::ok) == 0);
  for (std::size_t n = 1; n < k_status_count; ++n) {
    INFO("status " << n << " (" << status_name(status_number(n)) << ")");
    CHECK(rows_reading_status(status_number(n)) == 1);
  }
  for (std::size_t n = 0; n < k_error_code_count; ++n) {
    INFO("error code " << n);
    CHECK(rows_reading_code(code_number(n)) == 1);
  }
}

TEST_CASE("status codes: a row that reads both ways round-trips exactly in both directions") {
  for (const StatusCodeRow& row : k_status_codes) {
    if (row.mapping != StatusMapping::both) continue;
    INFO("status " << status_name(row.status));
    CHECK(error_code_for(row.status) == row.code);
    CHECK(status_for(row.code) == row.status);
  }
}

TEST_CASE("status codes: every status round-trips to itself unless its row reads it one way only") {
  for (std::size_t n = 1; n < k_status_count; ++n) {
    const Status status = status_number(n);
    INFO("status " << status_name(status));
    const Status answered = status_for(error_code_for(status));
    if (answered != status) {
      // Only a status that is read one way may come back as another.
      bool one_way = false;
      for (const StatusCodeRow& row : k_status_codes)
        one_way |= row.status == status && row.mapping == StatusMapping::to_code;
      CHECK(one_way);
    }
  }
}

TEST_CASE(
    "status codes: every error code round-trips to itself unless its row reads it one way only, and the status it is answered with is stable") {
  // A daemon that answers what a client (or its store) told it must not drift: once a code has
  // become a status, reading it back and answering again gives the same status.
  for (std::size_t n = 0; n < k_error_code_count; ++n) {
    const ErrorCode code = code_number(n);
    INFO("error code " << n);
    const Status status = status_for(code);
    CHECK(status != Status::ok);
    const ErrorCode read_back = error_code_for(status);
    CHECK(status_for(read_back) == status);
    if (read_back != code) {
      bool one_way = false;
      for (const StatusCodeRow& row : k_status_codes)
        one_way |= row.code == code && row.mapping == StatusMapping::to_status;
      CHECK(one_way);
    }
  }
}

TEST_CASE("status codes: forbidden is its own error code both ways, and the known folds are as documented") {
  CHECK(error_code_for(Status::forbidden) == ErrorCode::forbidden);
  CHECK(status_for(ErrorCode::forbidden) == Status::forbidden);
  CHECK(error_code_for(Status::not_found) == ErrorCode::not_found);
  CHECK(error_code_for(Status::busy) == ErrorCode::unavailable);
  CHECK(error_code_for(Status::cannot_compile) == ErrorCode::unsupported);
  CHECK(error_code_for(Status::no_space) == ErrorCode::no_space);
  CHECK(status_for(ErrorCode::unsupported) == Status::bad_request);
  CHECK(status_for(ErrorCode::timeout) == Status::unavailable);
  CHECK(status_for(ErrorCode::io) == Status::internal);
  CHECK(status_for(ErrorCode::corrupt) == Status::internal);
}

TEST_CASE("status codes: ok and a status a newer daemon may add are read as internal failures") {
  CHECK(error_code_for(Status::ok) == ErrorCode::internal);
  CHECK(error_code_for(status_number(k_status_count)) == ErrorCode::internal);
  CHECK(error_code_for(status_number(999)) == ErrorCode::internal);
}
