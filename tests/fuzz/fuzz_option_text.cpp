// libFuzzer target: the option text of the CLI and config files (proto::canonicalize_option_text).
//
// Properties checked (abort() on violation, so the fuzzer reports the input):
//   - nothing reads out of bounds, leaks or hits UB (ASan, UBSan, LeakSanitizer);
//   - a refusal is invalid_argument with a message;
//   - canonical text canonicalizes to itself, so a key built from it has one spelling;
//   - canonical text fits the key's options field and the daemon's key validation accepts it,
//     so whatever a client canonicalizes can be sent and stored.
#include <proto/jit_options.hpp>
#include <proto/key.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

using namespace jitcache::proto;
using namespace jitcache::common;

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_option_text: property violated: %s\n", what);
  std::abort();
}

KeyFields key_with_options(std::string options) {
  KeyFields key;
  key.content.bytes.fill(0x5A);
  key.arch = "sm_90";
  key.driver_api = 13000;
  key.driver_build = "580.159.04";
  key.options = std::move(options);
  return key;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto canonical = canonicalize_option_text(text);
  if (!canonical) {
    if (canonical.error().code != ErrorCode::invalid_argument) fail("a refusal is not invalid_argument");
    if (canonical.error().message.empty()) fail("a refusal has no message");
    return 0;
  }
  auto again = canonicalize_option_text(*canonical);
  if (!again) fail("canonical text is refused by the canonicalizer");
  if (*again != *canonical) fail("canonical text does not canonicalize to itself");
  if (canonical->size() > k_max_options_length) fail("canonical text does not fit the key's options field");
  if (!validate_key(key_with_options(*canonical))) fail("a key with canonical options fails validate_key");
  return 0;
}
