// Which build of the include scan's code runs in this process, for the scan memo
// (client/src/nvrtc/scan_memo.hpp): the GNU build ID (NT_GNU_BUILD_ID, a hash the linker computes
// over the linked object) of the shared object or executable that holds this code.
//
// Rationale: a memo entry holds what parse_include_directives found in a header. A build whose
// parse differs (a directive form it now reads that an earlier one missed) must not take an earlier
// build's entries: the toolkit's headers never change, so an entry written by a build that missed
// an include would serve that miss, and its wrong hits, long after the fix. A layout version in
// the memo's magic cannot tell: most fixes of the parse keep the layout. The build ID changes with
// any change of the code, with no one to remember to bump it.
// Thread safety: safe from any thread (computed once).
#pragma once

#include <string>

namespace jitcache::client::nvrtc {

// The build ID in hex; empty when the object has none (linked with --build-id=none): then there is
// no memo.
const std::string& scan_build_identity();

}  // namespace jitcache::client::nvrtc
