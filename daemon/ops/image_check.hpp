// What a PUT may store: a whole cubin (a 64-bit little-endian CUDA ELF, e_machine 190) that the
// driver would load on every GPU the key's arch stands for (anything else, such as PTX text PUT as
// the "image", would be stored in the shared namespace and served to every client of that key as
// text for cuModuleLoadData). The rules, and the cubin facts they rest on with their sources, are in
// docs/entry-format.md "What a PUT may store"; in short, for an image built for sm_XY (plain or
// family) or sm_XYa and a key for sm_KL[a|f]:
//   - same major (X = K) and the image's minor no higher (Y <= L): the driver's own rule for
//     running a cubin (docs/fatbin.md "How an image is chosen");
//   - an arch-specific (sm_XYa) image only for the key sm_XYa itself: it runs on that one CC only.
// The client checks the same structure before it loads a hit (client/src/loader/cached_image_check.hpp);
// this is the daemon refusing to store what every client would then refuse.
//
// Thread safety: pure functions.
#pragma once

#include <string_view>

#include <common/result.hpp>
#include <proto/digest.hpp>
#include <proto/key.hpp>

namespace jitcache::daemon::ops {

// ErrorCode::invalid_argument (bad_request) with the reason, e.g. "the image is not a cubin: it
// does not start with the ELF magic (PTX text? PUT stores the compiled image)" or "the image is
// an sm_80 cubin, which cannot serve the key's arch sm_90a: ...". `key_arch` passed
// proto::is_valid_arch.
common::Result<void> check_put_image(proto::Bytes image, std::string_view key_arch);

// What any entry's image must be for its key: for an NVRTC compile's key (options "compiler=nvrtc",
// proto/jit_options.hpp) one NVRTC result that decodes exactly (proto/nvrtc_result.hpp), which no
// program hands to the driver; for every other key check_put_image's cubin. PUT and a bundle's
// import both check this way. ErrorCode::invalid_argument with the reason.
common::Result<void> check_entry_image(proto::Bytes image, const proto::KeyFields& key);

}  // namespace jitcache::daemon::ops
