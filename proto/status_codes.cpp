#include <proto/status_codes.hpp>

namespace jitcache::proto {

common::ErrorCode error_code_for(Status status) {
  for (const StatusCodeRow& row : k_status_codes) {
    if (row.status == status && row.mapping != StatusMapping::to_status) return row.code;
  }
  return common::ErrorCode::internal;
}

Status status_for(common::ErrorCode code) {
  for (const StatusCodeRow& row : k_status_codes) {
    if (row.code == code && row.mapping != StatusMapping::to_code) return row.status;
  }
  return Status::internal;
}

}  // namespace jitcache::proto
