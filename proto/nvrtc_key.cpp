#include <proto/nvrtc_key.hpp>

#include <cstdint>

#include <proto/jit_options.hpp>

namespace jitcache::proto {

namespace {

// Rationale: u64 length prefixes and a tag per field, so no two different inputs share a preimage
// (a source ending where a header begins cannot be mistaken for another split of the same bytes).
void put_field(std::string& out, char tag, std::string_view value) {
  out.push_back(tag);
  const std::uint64_t size = value.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((size >> (8 * i)) & 0xff));
  out.append(value);
}

std::string_view view_of(const Checksum128& digest) {
  return {reinterpret_cast<const char*>(digest.bytes.data()), digest.bytes.size()};
}

// The key of `input` with `name` and `include_record` in place of its own (nvrtc_program_directory.hpp).
common::Result<NvrtcKey> key_of(std::string_view kind, const NvrtcCompileInput& input, std::string_view name,
                                std::string_view include_record) {
  std::string preimage(kind);
  preimage.push_back('\0');
  put_field(preimage, 'V', std::to_string(input.identity.major) + "." + std::to_string(input.identity.minor));
  put_field(preimage, 'L', view_of(input.identity.library));
  put_field(preimage, 'B', view_of(input.identity.builtins));
  put_field(preimage, 'N', name);
  put_field(preimage, 'S', input.source);
  put_field(preimage, 'h', std::to_string(input.headers.size()));
  for (const auto& [header_name, content] : input.headers) {
    put_field(preimage, 'H', header_name);
    put_field(preimage, 'C', content);
  }
  put_field(preimage, 'o', std::to_string(input.options.keyed.size()));
  for (const std::string& option : input.options.keyed) put_field(preimage, 'O', option);
  put_field(preimage, 'e', std::to_string(input.name_expressions.size()));
  for (const std::string& expression : input.name_expressions) put_field(preimage, 'E', expression);
  put_field(preimage, 'I', include_record);
  put_field(preimage, 'W', input.working_directory);

  KeyFields key;
  key.content = sha256(as_bytes(preimage));
  key.arch = input.options.arch;
  key.driver_api = static_cast<std::uint32_t>(input.identity.major * 1000 + input.identity.minor * 10);
  key.driver_build = "nvrtc-" + std::to_string(input.identity.major) + "." + std::to_string(input.identity.minor) +
                     "-" + to_hex(input.identity.library).substr(0, 16);
  key.options = std::string(k_nvrtc_option_text);
  JITCACHE_TRY(validate_key(key));
  return NvrtcKey{std::move(key), xxh3_128(as_bytes(preimage))};
}

}  // namespace

common::Result<NvrtcKey> nvrtc_key(const NvrtcCompileInput& input) {
  return key_of("jitcache nvrtc compile v1", input, input.name, input.include_record);
}

common::Result<NvrtcKey> nvrtc_program_relative_key(const NvrtcCompileInput& input, std::string_view relative_record) {
  const std::size_t slash = input.name.rfind('/');
  const std::string_view base = std::string_view(input.name).substr(slash == std::string::npos ? 0 : slash + 1);
  return key_of("jitcache nvrtc compile v2, relative to the program's directory", input, base, relative_record);
}

}  // namespace jitcache::proto
