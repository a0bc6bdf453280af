#include <proto/nvrtc_answers.hpp>

namespace jitcache::proto {

namespace {

// NVRTC_SUCCESS in nvrtc.h.
constexpr std::uint32_t k_success = 0;

// An expression no program adds (a control character leads it): what nvrtcGetLoweredName answers
// for a name never added is asked with it.
constexpr const char* k_unknown_expression = "\x01jitcache: not a name expression";

}  // namespace

NvrtcResult nvrtc_answers_of(const NvrtcQuestions& ask, std::uint32_t compiled,
                             const std::vector<std::string>& expressions) {
  NvrtcResult answers;
  answers.compile_result = compiled;
  for (std::size_t i = 0; i < answers.outputs.size(); ++i) {
    NvrtcOutputAnswer& output = answers.outputs[i];
    if (!ask.has_output(i)) continue;
    output.present = true;
    std::size_t size = 0;
    output.size_result = ask.size_of(i, &size);
    if (output.size_result != k_success) continue;
    std::vector<char> bytes(size + 1, '\0');
    output.bytes_result = ask.bytes_of(i, bytes.data());
    if (output.bytes_result == k_success) output.bytes.assign(bytes.begin(), bytes.begin() + static_cast<long>(size));
  }
  for (const std::string& expression : expressions) {
    const char* lowered = nullptr;
    const std::uint32_t result = ask.lowered_name(expression.c_str(), &lowered);
    answers.lowered_names.push_back(
        {expression, result, result == k_success && lowered != nullptr ? std::string(lowered) : std::string()});
  }
  const char* unknown = nullptr;
  answers.unknown_name_result = ask.lowered_name(k_unknown_expression, &unknown);
  return answers;
}

}  // namespace jitcache::proto
