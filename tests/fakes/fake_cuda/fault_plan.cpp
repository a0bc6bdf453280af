#include <tests/fakes/fake_cuda/fault_plan.hpp>

#include <charconv>

namespace jitcache::fakes::fake_cuda {
namespace {

constexpr std::array<std::string_view, k_fault_point_count> k_point_names = {
    "ctx",      "load_cubin",    "load_ptx",     "load_fatbin", "link_create",
    "link_add", "link_complete", "load_library", "launch",
};

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::optional<FaultRule> parse_item(std::string_view item) {
  const auto first = item.find(':');
  if (first == std::string_view::npos) return std::nullopt;
  const auto point = fault_point_from_name(item.substr(0, first));
  std::string_view rest = item.substr(first + 1);
  std::string_view times_text;
  if (const auto second = rest.find(':'); second != std::string_view::npos) {
    times_text = rest.substr(second + 1);
    rest = rest.substr(0, second);
  }
  const auto code = parse_int(rest);
  const auto times = times_text.empty() ? std::optional<int>(0) : parse_int(times_text);
  if (!point || !code || *code <= 0 || !times || *times < 0) return std::nullopt;
  return FaultRule{*point, *code, *times};
}

}  // namespace

std::optional<FaultPoint> fault_point_from_name(std::string_view name) {
  for (std::size_t i = 0; i < k_point_names.size(); ++i) {
    if (k_point_names[i] == name) return static_cast<FaultPoint>(i);
  }
  return std::nullopt;
}

std::string_view fault_point_name(FaultPoint point) { return k_point_names[static_cast<std::size_t>(point)]; }

std::vector<FaultRule> parse_fault_spec(std::string_view spec, std::vector<std::string>& problems) {
  std::vector<FaultRule> rules;
  while (!spec.empty()) {
    const auto comma = spec.find(',');
    const std::string_view item = trim(spec.substr(0, comma));
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (item.empty()) continue;
    if (auto rule = parse_item(item)) {
      rules.push_back(*rule);
    } else {
      problems.push_back("ignoring FAKE_CUDA_FAIL item '" + std::string(item) +
                         "' (expected point:code[:times] with a known point and a positive code)");
    }
  }
  return rules;
}

void FaultPlan::set(FaultPoint point, int code, int times) {
  const std::lock_guard lock(m_mutex);
  m_slots[static_cast<std::size_t>(point)] = Slot{code, code == 0 ? 0 : times};
}

void FaultPlan::clear() {
  const std::lock_guard lock(m_mutex);
  m_slots.fill(Slot{});
}

std::optional<int> FaultPlan::take(FaultPoint point) {
  const std::lock_guard lock(m_mutex);
  Slot& slot = m_slots[static_cast<std::size_t>(point)];
  if (slot.code == 0) return std::nullopt;
  const int code = slot.code;
  if (slot.remaining > 0 && --slot.remaining == 0) slot = Slot{};
  return code;
}

}  // namespace jitcache::fakes::fake_cuda
