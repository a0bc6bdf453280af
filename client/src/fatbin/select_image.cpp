#include <client/src/fatbin/select_image.hpp>

#include <optional>
#include <string>
#include <tuple>

namespace jitcache::client::fatbin {
namespace {

unsigned device_sm(const DeviceTarget& device) { return device.major * 10 + device.minor; }

// Larger is more specific to one device.
int variant_rank(ArchVariant variant) {
  switch (variant) {
    case ArchVariant::arch_specific: return 2;
    case ArchVariant::plain: return 1;
    case ArchVariant::family: return 0;
  }
  return 0;
}

bool same_major_not_newer(const Arch& arch, const DeviceTarget& device) {
  return arch.major() == device.major && arch.minor() <= device.minor;
}

bool variant_allowed(const Arch& arch, const DeviceTarget& device) {
  switch (arch.variant) {
    case ArchVariant::arch_specific: return device.arch_specific && arch.sm == device_sm(device);
    case ArchVariant::family: return device.family && same_major_not_newer(arch, device);
    case ArchVariant::plain: return true;
  }
  return false;
}

bool isa_at_most(const Entry& entry, const PtxIsa& max_ptx) {
  return std::tie(entry.version_major, entry.version_minor) <= std::tie(max_ptx.major, max_ptx.minor);
}

std::string list_entries(std::span<const Entry> entries) {
  if (entries.empty()) return "the fat binary holds no entries";
  std::string text = "the fat binary holds ";
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (i != 0) text += ", ";
    text += describe(entries[i]);
  }
  return text;
}

}  // namespace

bool cubin_runs_on(const Arch& arch, const DeviceTarget& device) {
  return same_major_not_newer(arch, device) && variant_allowed(arch, device);
}

bool ptx_targets(const Arch& arch, const DeviceTarget& device) {
  if (arch.variant != ArchVariant::plain) return variant_allowed(arch, device);
  return arch.sm <= device_sm(device);
}

common::Result<Selection> select_image(std::span<const Entry> entries, const DeviceTarget& device,
                                       const PtxIsa& max_ptx) {
  std::optional<std::size_t> best_cubin;
  std::optional<std::size_t> best_ptx;
  bool ptx_too_new = false;
  const auto cubin_key = [&](std::size_t i) {
    return std::tuple(entries[i].arch.sm, variant_rank(entries[i].arch.variant));
  };
  const auto ptx_key = [&](std::size_t i) {
    const Entry& e = entries[i];
    return std::tuple(e.arch.sm, variant_rank(e.arch.variant), e.version_major, e.version_minor);
  };
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Entry& entry = entries[i];
    if (entry.kind == EntryKind::cubin && cubin_runs_on(entry.arch, device)) {
      if (!best_cubin || cubin_key(i) > cubin_key(*best_cubin)) best_cubin = i;
    } else if (entry.kind == EntryKind::ptx && ptx_targets(entry.arch, device)) {
      if (!isa_at_most(entry, max_ptx)) {
        ptx_too_new = true;
        continue;
      }
      if (!best_ptx || ptx_key(i) > ptx_key(*best_ptx)) best_ptx = i;
    }
  }
  if (best_cubin) return Selection{Action::load_cubin, *best_cubin};
  if (best_ptx) return Selection{Action::jit_ptx, *best_ptx};

  std::string message = "no image for this device (CC " + std::to_string(device.major) + "." +
                        std::to_string(device.minor) + (device.arch_specific ? ", a" : "") +
                        (device.family ? ", f" : "") + "; driver JITs PTX up to ISA " + std::to_string(max_ptx.major) +
                        "." + std::to_string(max_ptx.minor) + "): " + list_entries(entries);
  if (ptx_too_new) message += "; a PTX entry for this device needs a newer driver";
  return common::make_error(common::ErrorCode::unsupported, std::move(message));
}

}  // namespace jitcache::client::fatbin
