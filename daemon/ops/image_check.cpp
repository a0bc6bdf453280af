#include <daemon/ops/image_check.hpp>

#include <string>

#include <common/result.hpp>
#include <daemon/ops/cubin_target.hpp>
#include <proto/jit_options.hpp>
#include <proto/nvrtc_result.hpp>

namespace jitcache::daemon::ops {

using common::ErrorCode;

namespace {

struct KeyArch {
  unsigned sm = 0;      // 0: more digits than any SM has
  char variant = '\0';  // 'a', 'f' or none
};

// `arch` passed proto::is_valid_arch: "sm_", two or more digits, then 'a', 'f' or nothing.
KeyArch parse_key_arch(std::string_view arch) {
  KeyArch parsed;
  std::string_view digits = arch.substr(3);
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) {
    parsed.variant = digits.back();
    digits.remove_suffix(1);
  }
  // Rationale: e_flags holds the SM in one byte, so a key beyond 255 is one no cubin can serve.
  if (digits.size() > 3) return parsed;
  unsigned sm = 0;
  for (char c : digits) sm = sm * 10 + static_cast<unsigned>(c - '0');
  parsed.sm = sm <= 255 ? sm : 0;
  return parsed;
}

std::string name(const CubinTarget& target) {
  return "sm_" + std::to_string(target.sm) + (target.arch_specific ? "a" : "");
}

common::Error cannot_serve(const CubinTarget& target, std::string_view key_arch, const std::string& why) {
  return common::make_error(ErrorCode::invalid_argument, "the image is an " + name(target) +
                                                             " cubin, which cannot serve the key's arch " +
                                                             std::string(key_arch) + ": " + why);
}

}  // namespace

common::Result<void> check_put_image(proto::Bytes image, std::string_view key_arch) {
  auto target = read_cubin_target(image);
  JITCACHE_TRY(target);
  const KeyArch key = parse_key_arch(key_arch);
  if (key.sm == 0 || target->sm / 10 != key.sm / 10) {
    return cannot_serve(*target, key_arch, "a cubin runs only on GPUs of its own major compute capability");
  }
  if (target->sm % 10 > key.sm % 10) {
    return cannot_serve(*target, key_arch, "a cubin needs a GPU of its own minor compute capability or a later one");
  }
  if (target->arch_specific && (key.variant != 'a' || target->sm != key.sm)) {
    return cannot_serve(*target, key_arch,
                        "an arch-specific cubin runs on compute capability " + std::to_string(target->sm / 10) + "." +
                            std::to_string(target->sm % 10) + " only, and serves only the key arch " + name(*target));
  }
  return {};
}

common::Result<void> check_entry_image(proto::Bytes image, const proto::KeyFields& key) {
  if (!proto::is_nvrtc_option_text(key.options)) return check_put_image(image, key.arch);
  auto decoded = proto::decode_nvrtc_result(image);
  if (!decoded) return common::make_error(common::ErrorCode::invalid_argument, decoded.error().message);
  return {};
}

}  // namespace jitcache::daemon::ops
