// What an unexpected HTTP status means for the tier (daemon/remote/http/http_status.hpp).
#include <catch2/catch.hpp>

#include <daemon/remote/http/http_status.hpp>

using jitcache::common::ErrorCode;
using jitcache::daemon::remote::http::error_for_status;

TEST_CASE("http status: 401 and 403 are forbidden, naming the request and the status") {
  for (const unsigned status : {401U, 403U}) {
    const auto error = error_for_status(status, "PUT https://cache/jc/img/ab");
    CHECK(error.code == ErrorCode::forbidden);
    CHECK_THAT(error.message, Catch::StartsWith("PUT https://cache/jc/img/ab: HTTP " + std::to_string(status)));
  }
  CHECK_THAT(error_for_status(401, "GET x").message, Catch::Contains("remote_password_file"));
}

TEST_CASE("http status: 5xx and every other unexpected status are io errors with the status in the message") {
  for (const unsigned status : {500U, 502U, 503U, 599U, 301U, 307U, 400U, 409U, 413U, 418U}) {
    const auto error = error_for_status(status, "GET x");
    CHECK(error.code == ErrorCode::io);
    CHECK_THAT(error.message, Catch::Contains("HTTP " + std::to_string(status)));
  }
  CHECK_THAT(error_for_status(302, "GET x").message, Catch::Contains("redirects are not followed"));
  CHECK_THAT(error_for_status(409, "PUT x").message, Catch::Contains("folders"));
}
