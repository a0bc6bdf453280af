#include <daemon/compile/toolkit_support.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <span>

namespace jitcache::daemon::compile {

namespace {

struct IsaRow {
  ToolkitVersion toolkit;
  PtxIsa max_isa;
};

// PTX ISA → first CUDA release that reads it (docs/driver-facts.md §2, from the PTX release table that
// NVIDIA/cuda-python's _ptx_utils.py maps; 9.0 from nvcc 13.0's own output). A release reads every
// ISA up to its own. 12.6 shipped no new ISA (8.6 arrived with 12.7).
constexpr std::array k_isa_rows = {
    IsaRow{{12, 0}, {8, 0}}, IsaRow{{12, 1}, {8, 1}}, IsaRow{{12, 2}, {8, 2}}, IsaRow{{12, 3}, {8, 3}},
    IsaRow{{12, 4}, {8, 4}}, IsaRow{{12, 5}, {8, 5}}, IsaRow{{12, 6}, {8, 5}}, IsaRow{{12, 7}, {8, 6}},
    IsaRow{{12, 8}, {8, 7}}, IsaRow{{12, 9}, {8, 8}}, IsaRow{{13, 0}, {9, 0}},
};

struct ArchRow {
  ToolkitVersion toolkit;
  std::span<const unsigned> plain;        // sm_NN
  std::span<const unsigned> accelerated;  // sm_NNa
  std::span<const unsigned> family;       // sm_NNf
};

// nvJitLink 13.0, probed on every sm_30 … sm_130 with no suffix, `a` and `f`: the rest fail
// nvJitLinkCreate (UNSUPPORTED_ARCH for sm_30 … sm_70, UNRECOGNIZED_ARCH for non-archs) or fail in
// ptxas ("Value 'sm_90f' is not defined for option 'gpu-name'"). These match cuda.h 13.0's CUjit_target.
constexpr unsigned k_13_0_plain[] = {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};
constexpr unsigned k_13_0_accelerated[] = {90, 100, 103, 110, 120, 121};
constexpr unsigned k_13_0_family[] = {100, 103, 110, 120, 121};

// Rationale: only releases probed against the real library are listed; an unlisted one is refused
// as unknown rather than trusted to a table typed from release notes.
const std::array k_arch_rows = {
    ArchRow{{13, 0}, k_13_0_plain, k_13_0_accelerated, k_13_0_family},
};

bool contains(std::span<const unsigned> list, unsigned value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

std::string to_string(ToolkitVersion version) {
  return std::to_string(version.major) + "." + std::to_string(version.minor);
}

std::string to_string(PtxIsa isa) { return std::to_string(isa.major) + "." + std::to_string(isa.minor); }

std::string producer_name(ToolkitVersion version) { return "nvJitLink " + to_string(version); }

std::optional<PtxIsa> max_ptx_isa(ToolkitVersion version) {
  for (const IsaRow& row : k_isa_rows) {
    if (row.toolkit == version) return row.max_isa;
  }
  return std::nullopt;
}

std::optional<bool> can_target(ToolkitVersion version, std::string_view arch) {
  const ArchRow* row = nullptr;
  for (const ArchRow& candidate : k_arch_rows) {
    if (candidate.toolkit == version) row = &candidate;
  }
  if (row == nullptr) return std::nullopt;
  if (!arch.starts_with("sm_")) return false;
  std::string_view digits = arch.substr(3);
  std::span<const unsigned> list = row->plain;
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) {
    list = digits.back() == 'a' ? row->accelerated : row->family;
    digits.remove_suffix(1);
  }
  unsigned number = 0;
  const auto parsed = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (parsed.ec != std::errc() || parsed.ptr != digits.data() + digits.size()) return false;
  return contains(list, number);
}

}  // namespace jitcache::daemon::compile
