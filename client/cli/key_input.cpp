#include <client/cli/key_input.hpp>

#include <charconv>

#include <client/cli/file_io.hpp>
#include <client/src/key/key_builder.hpp>
#include <common/result.hpp>
#include <proto/messages.hpp>

namespace jitcache::client::cli {

namespace {

common::Error usage_error(std::string message) {
  return common::make_error(common::ErrorCode::invalid_argument, std::move(message));
}

bool is_all_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool is_printable_without_spaces(std::string_view text) {
  for (char c : text) {
    if (c <= ' ' || c > '~') return false;
  }
  return true;
}

}  // namespace

common::Result<void> check_arch(std::string_view arch) {
  if (!proto::is_valid_arch(arch)) {
    return usage_error("--arch \"" + std::string(arch) +
                       "\" is not of the form sm_<digits>[a|f], e.g. sm_90 or sm_90a");
  }
  return {};
}

common::Result<proto::KeyFields> build_key(const KeyInput& input, proto::Checksum128* content_fast) {
  if (auto arch = check_arch(input.arch); !arch) return arch.error();
  auto driver = proto::parse_driver_id(input.driver);
  if (!driver) return usage_error("--driver: " + driver.error().message);
  auto options = key::KeyBuilder::options_from_text(input.options, {});
  if (!options) return usage_error("--options: " + options.error().message);

  auto source = read_whole_file(input.source_path);
  JITCACHE_TRY(source);

  // The file's bytes as they are on disk, under the arch as typed (not the one a device's JIT would
  // choose: docs/cli.md).
  const std::string_view ptx(reinterpret_cast<const char*>(source->data()), source->size());
  auto built = key::KeyBuilder::for_arch(input.arch, *driver).build(ptx, *options);
  if (!built) return usage_error("invalid key: " + built.error().message);
  if (content_fast != nullptr) *content_fast = built->content_fast();
  return built->complete();
}

common::Result<DriverFilter> parse_driver_filter(std::string_view text) {
  DriverFilter filter;
  if (text.find('/') != std::string_view::npos) {
    auto driver = proto::parse_driver_id(text);
    if (!driver) return usage_error("--driver: " + driver.error().message);
    filter.api = driver->api;
    filter.build = driver->build;
    return filter;
  }
  if (is_all_digits(text)) {
    const auto parsed = std::from_chars(text.data(), text.data() + text.size(), filter.api);
    if (parsed.ec != std::errc() || filter.api == 0) {
      return usage_error("--driver \"" + std::string(text) +
                         "\": the API version must be a number from 1 to 4294967295");
    }
    return filter;
  }
  if (text.empty() || text.size() > proto::k_max_driver_build_length || !is_printable_without_spaces(text)) {
    return usage_error("--driver \"" + std::string(text) +
                       "\" is neither API/BUILD, an API version nor a driver build (printable, no spaces, at most " +
                       std::to_string(proto::k_max_driver_build_length) + " characters)");
  }
  filter.build = std::string(text);
  return filter;
}

common::Result<std::string> parse_key_id_prefix(std::string_view text) {
  std::string prefix;
  prefix.reserve(text.size());
  for (char c : text) {
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return usage_error("key id \"" + std::string(text) + "\" is not hexadecimal");
    }
    prefix.push_back(c);
  }
  if (prefix.size() < proto::k_min_key_id_prefix_length || prefix.size() > 64) {
    return usage_error("key id \"" + std::string(text) + "\" must have " +
                       std::to_string(proto::k_min_key_id_prefix_length) +
                       " to 64 hex digits (jitcache ls prints the first 16)");
  }
  return prefix;
}

}  // namespace jitcache::client::cli
