// libFuzzer target: the NVRTC result decoder (proto/nvrtc_result.hpp), which the daemon runs on
// every PUT under an NVRTC key (daemon/ops/image_check.hpp check_entry_image) and the client on
// every NVRTC hit, both on bytes a tenant wrote.
//
// Properties checked (abort() on violation, so the fuzzer reports the input):
//   - nothing reads out of bounds, leaks or hits UB (ASan, UBSan, LeakSanitizer);
//   - a blob that decodes encodes back to exactly itself (the format has one spelling per result,
//     so a stored entry cannot mean two things).
#include <cstdint>
#include <cstdlib>
#include <vector>

#include <proto/nvrtc_result.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const jitcache::proto::Bytes blob(data, size);
  auto decoded = jitcache::proto::decode_nvrtc_result(blob);
  if (!decoded) return 0;
  const std::vector<std::uint8_t> again = jitcache::proto::encode_nvrtc_result(*decoded);
  if (again.size() != size || !std::equal(again.begin(), again.end(), data)) std::abort();
  return 0;
}
