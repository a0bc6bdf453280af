// EXPORT_BUNDLE and IMPORT_BUNDLE (PROTOCOL.md §5): the op table's handlers around BundleService.
// Their row (op_table.cpp) puts them on the bundle lane, one at a time per uid, with the file the
// request carried as a descriptor.
#include <daemon/ops/request_handler.hpp>

#include <daemon/ops/bundle_service.hpp>

namespace jitcache::daemon::ops {

Reply RequestHandler::export_bundle(OpCall& call) {
  return m_bundles->export_bundle(call.payload, call.peer, call.descriptor.get());
}

Reply RequestHandler::import_bundle(OpCall& call) {
  return m_bundles->import_bundle(call.payload, call.peer, call.descriptor.get());
}

}  // namespace jitcache::daemon::ops
