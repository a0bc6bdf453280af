#include <tests/fakes/fake_cuda/device_model.hpp>

#include <charconv>

namespace jitcache::fakes::fake_cuda {
namespace {

std::optional<unsigned> parse_unsigned(std::string_view text) {
  unsigned value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<unsigned> parse_cc(std::string_view text) {
  std::optional<unsigned> cc;
  if (const auto dot = text.find('.'); dot != std::string_view::npos) {
    const auto major = parse_unsigned(text.substr(0, dot));
    const auto minor = parse_unsigned(text.substr(dot + 1));
    if (major && minor && *minor <= 9) cc = *major * 10 + *minor;
  } else {
    cc = parse_unsigned(text);
  }
  // Rationale: nothing older than Kepler has a CUDA 11+ driver, and 3 digits cover every CC so far.
  if (!cc || *cc < 30 || *cc > 999) return std::nullopt;
  return cc;
}

fb::Arch context_jit_target(unsigned cc) {
  return fb::Arch{cc, cc >= 90 ? fb::ArchVariant::arch_specific : fb::ArchVariant::plain};
}

fb::DeviceTarget device_target(unsigned cc) { return fb::DeviceTarget{cc / 10, cc % 10, cc >= 90, cc >= 100}; }

fb::PtxIsa max_ptx_isa(int driver_version) {
  const int major = driver_version / 1000;
  const int minor = (driver_version % 1000) / 10;
  // CUDA 13.y ships PTX ISA 9.y ([E] 13.0 → 9.0; [I] later minors follow the pattern).
  if (major >= 13) return fb::PtxIsa{static_cast<unsigned>(9 + (major - 13)), static_cast<unsigned>(minor)};
  if (major == 12) {
    // 12.0 → 8.0 … 12.5 → 8.5; 12.6 kept 8.5; 12.7 → 8.6, 12.8 → 8.7, 12.9 → 8.8 (docs/driver-facts.md §2).
    static constexpr unsigned k_isa_minor[10] = {0, 1, 2, 3, 4, 5, 5, 6, 7, 8};
    return fb::PtxIsa{8, k_isa_minor[minor > 9 ? 9 : minor]};
  }
  if (major == 11) return fb::PtxIsa{7, static_cast<unsigned>(minor > 8 ? 8 : minor)};
  // Rationale: older drivers cannot run anything nvJitLink 13 makes; 6.0 keeps them answering.
  return fb::PtxIsa{6, 0};
}

bool cubin_runs_on_device(const fb::Arch& target, unsigned cc) { return fb::cubin_runs_on(target, device_target(cc)); }

}  // namespace jitcache::fakes::fake_cuda
