#include <daemon/remote/http/http_status.hpp>

namespace jitcache::daemon::remote::http {

common::Error error_for_status(unsigned status, const std::string& what) {
  const std::string answer = what + ": HTTP " + std::to_string(status);
  if (status == 401) {
    return common::make_error(common::ErrorCode::forbidden,
                              answer + " (the server wants credentials, or refused those of remote_password_file)");
  }
  if (status == 403) {
    return common::make_error(common::ErrorCode::forbidden, answer + " (the server refuses this to these credentials)");
  }
  if (status >= 500 && status < 600) return common::make_error(common::ErrorCode::io, answer + " (a server error)");
  if (status >= 300 && status < 400) {
    return common::make_error(common::ErrorCode::io, answer + " (a redirect: redirects are not followed)");
  }
  if (status == 409) {
    return common::make_error(common::ErrorCode::io,
                              answer +
                                  " (a WebDAV server answers so when the folders of the path do not exist: it "
                                  "must create them on PUT)");
  }
  return common::make_error(common::ErrorCode::io, answer + " (not an answer expected here)");
}

}  // namespace jitcache::daemon::remote::http
