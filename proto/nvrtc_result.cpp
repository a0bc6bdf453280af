#include <proto/nvrtc_result.hpp>

#include <proto/byte_io.hpp>

namespace jitcache::proto {

namespace {

constexpr std::size_t k_max_name_length = 65535;

common::Error corrupt(std::string message) {
  return common::make_error(common::ErrorCode::corrupt, "NVRTC result: " + std::move(message));
}

}  // namespace

std::vector<std::uint8_t> encode_nvrtc_result(const NvrtcResult& result) {
  std::vector<std::uint8_t> out;
  ByteWriter writer(out);
  writer.raw(as_bytes(result.log_directory_at.empty() ? k_nvrtc_result_magic : k_nvrtc_result_cut_magic));
  writer.u32(result.compile_result);
  for (const NvrtcOutputAnswer& output : result.outputs) {
    writer.u8(output.present ? 1 : 0);
    writer.u32(output.size_result);
    writer.u32(output.bytes_result);
    writer.blob32(Bytes(output.bytes));
  }
  writer.u32(static_cast<std::uint32_t>(result.lowered_names.size()));
  for (const NvrtcLoweredName& name : result.lowered_names) {
    writer.str16(name.expression.substr(0, k_max_name_length));
    writer.u32(name.result);
    writer.str16(name.lowered.substr(0, k_max_name_length));
  }
  writer.u32(result.unknown_name_result);
  if (!result.log_directory_at.empty()) {
    writer.u32(static_cast<std::uint32_t>(result.log_directory_at.size()));
    for (const std::uint32_t at : result.log_directory_at) writer.u32(at);
  }
  return out;
}

common::Result<NvrtcResult> decode_nvrtc_result(Bytes blob) {
  const std::string_view magic =
      blob.size() < k_nvrtc_result_magic.size()
          ? std::string_view()
          : std::string_view(reinterpret_cast<const char*>(blob.data()), k_nvrtc_result_magic.size());
  if (magic != k_nvrtc_result_magic && magic != k_nvrtc_result_cut_magic) {
    return corrupt("the blob does not start with \"JCNVRTC1\" or \"JCNVRTC2\"");
  }
  ByteReader reader(blob.subspan(k_nvrtc_result_magic.size()));
  NvrtcResult result;
  auto compile = reader.u32("compile result");
  if (!compile) return corrupt(compile.error().message);
  result.compile_result = *compile;
  for (NvrtcOutputAnswer& output : result.outputs) {
    auto present = reader.u8("present");
    auto size_result = present ? reader.u32("size result") : common::Result<std::uint32_t>(present.error());
    auto bytes_result = size_result ? reader.u32("bytes result") : common::Result<std::uint32_t>(size_result.error());
    auto bytes = bytes_result ? reader.blob32("bytes") : common::Result<Bytes>(bytes_result.error());
    if (!bytes) return corrupt(bytes.error().message);
    if (*present > 1) return corrupt("an output's present flag is " + std::to_string(*present));
    output.present = *present == 1;
    output.size_result = *size_result;
    output.bytes_result = *bytes_result;
    output.bytes.assign(bytes->begin(), bytes->end());
  }
  auto count = reader.u32("name count");
  if (!count) return corrupt(count.error().message);
  if (*count > reader.remaining()) return corrupt("the name count exceeds the blob");
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto expression = reader.str16("expression", k_max_name_length);
    auto code = expression ? reader.u32("lowered result") : common::Result<std::uint32_t>(expression.error());
    auto lowered =
        code ? reader.str16("lowered name", k_max_name_length) : common::Result<std::string_view>(code.error());
    if (!lowered) return corrupt(lowered.error().message);
    result.lowered_names.push_back({std::string(*expression), *code, std::string(*lowered)});
  }
  auto unknown = reader.u32("unknown name result");
  if (!unknown) return corrupt(unknown.error().message);
  result.unknown_name_result = *unknown;
  if (magic == k_nvrtc_result_cut_magic) {
    auto cuts = reader.u32("cut count");
    if (!cuts) return corrupt(cuts.error().message);
    if (*cuts == 0 || *cuts > reader.remaining() / 4) return corrupt("the cut count is " + std::to_string(*cuts));
    const std::size_t log_size = result.output(NvrtcOutput::log).bytes.size();
    for (std::uint32_t i = 0; i < *cuts; ++i) {
      auto at = reader.u32("cut offset");
      if (!at) return corrupt(at.error().message);
      if (*at > log_size || (!result.log_directory_at.empty() && *at <= result.log_directory_at.back())) {
        return corrupt("a cut offset (" + std::to_string(*at) + ") is past the log or out of order");
      }
      result.log_directory_at.push_back(*at);
    }
  }
  if (auto end = reader.expect_end("NVRTC result"); !end) return corrupt(end.error().message);
  return result;
}

}  // namespace jitcache::proto
