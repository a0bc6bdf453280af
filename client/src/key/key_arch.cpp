#include <client/src/key/key_arch.hpp>

#include <client/src/key/ptx_header.hpp>

namespace jitcache::client::key {

namespace {
// The first CC whose driver JIT emits arch-specific code by default (docs/driver-facts.md §1).
constexpr unsigned k_first_arch_specific_sm = 90;
}  // namespace

std::string key_arch(const driver::ComputeCapability& device, const std::optional<std::string>& target_option,
                     const std::optional<fatbin::Arch>& ptx_target) {
  fatbin::Arch arch{device.sm(), fatbin::ArchVariant::plain};
  if (target_option) {
    if (auto parsed = parse_sm_arch(*target_option)) arch = *parsed;
  }
  if (arch.variant == fatbin::ArchVariant::plain) {
    if (ptx_target && ptx_target->sm == arch.sm && ptx_target->variant != fatbin::ArchVariant::plain) {
      arch.variant = ptx_target->variant;
    } else if (arch.sm == device.sm() && arch.sm >= k_first_arch_specific_sm) {
      arch.variant = fatbin::ArchVariant::arch_specific;
    }
  }
  return fatbin::arch_name(arch);
}

}  // namespace jitcache::client::key
