#include <client/src/key/key_builder.hpp>

#include <client/src/driver/driver_identity.hpp>
#include <client/src/key/key_arch.hpp>
#include <client/src/key/ptx_header.hpp>
#include <common/result.hpp>

namespace jitcache::client::key {

void BuiltKey::start_digest() {
  if (m_complete || m_digest) return;
  m_digest = std::make_unique<proto::ContentDigestTask>(proto::as_bytes(m_ptx));
}

const proto::KeyFields& BuiltKey::complete() {
  if (!m_complete) {
    m_fields.content = m_digest ? m_digest->wait() : proto::content_digest(proto::as_bytes(m_ptx));
    m_digest.reset();
    m_complete = true;
  }
  return m_fields;
}

KeyBuilder KeyBuilder::for_device(const driver::ComputeCapability& device, proto::DriverId driver) {
  return KeyBuilder(device, {}, std::move(driver));
}

KeyBuilder KeyBuilder::for_arch(std::string arch, proto::DriverId driver) {
  return KeyBuilder(std::nullopt, std::move(arch), std::move(driver));
}

common::Result<void> KeyBuilder::check_ptx_version(std::string_view ptx) const {
  const PtxHeader header = read_ptx_header(ptx);
  const auto isa = driver::max_ptx_isa(static_cast<int>(m_driver.api));
  if (header.version_major && header.version_minor &&
      (*header.version_major > isa.major ||
       (*header.version_major == isa.major && *header.version_minor > isa.minor))) {
    return common::make_error(common::ErrorCode::unsupported,
                              "PTX ISA " + std::to_string(*header.version_major) + "." +
                                  std::to_string(*header.version_minor) + " is newer than this driver (API " +
                                  std::to_string(m_driver.api) + ") JIT-compiles (" + std::to_string(isa.major) + "." +
                                  std::to_string(isa.minor) + ")");
  }
  return {};
}

common::Result<proto::CanonicalOptions> KeyBuilder::options_from_jit(unsigned count, const CUjit_option* options,
                                                                     void* const* values) {
  // proto/ mirrors CUjit_option by value without cuda.h (jit_options.hpp): the enum is an int.
  return proto::canonicalize_options(count, reinterpret_cast<const int*>(options), values);
}

common::Result<proto::CanonicalOptions> KeyBuilder::options_from_text(std::string_view text,
                                                                      const std::vector<JitOptionValue>& embedded) {
  if (embedded.empty()) {
    auto canonical = proto::canonicalize_option_text(text);
    JITCACHE_TRY(canonical);
    proto::CanonicalOptions options;
    options.text = std::move(*canonical);
    return options;
  }
  if (!text.empty()) {
    return common::make_error(common::ErrorCode::unsupported,
                              "--options and the fat binary's embedded ptxas options together are not supported");
  }
  std::vector<CUjit_option> names;
  std::vector<void*> slots;
  for (const auto& option : embedded) {
    names.push_back(option.option);
    slots.push_back(reinterpret_cast<void*>(option.value));
  }
  return options_from_jit(static_cast<unsigned>(names.size()), names.data(), slots.data());
}

common::Result<BuiltKey> KeyBuilder::build(std::string_view ptx, const proto::CanonicalOptions& options,
                                           Digest digest) const {
  proto::KeyFields fields;
  fields.arch = m_device ? key_arch(*m_device, options.target_arch, read_ptx_header(ptx).target) : m_arch;
  fields.driver_api = m_driver.api;
  fields.driver_build = m_driver.build;
  fields.options = options.text;
  BuiltKey key(std::move(fields), proto::Checksum128{}, ptx);
  // Rationale: the SHA-256 threads start first, so that they run while this thread computes the
  // XXH3-128 (about 0.3 ms for a 3 MB module on the GPU host: docs/benchmarks.md "The load path on the GPU host").
  if (digest == Digest::in_background) key.start_digest();
  key.m_content_fast = proto::xxh3_128(proto::as_bytes(ptx));
  JITCACHE_TRY(proto::validate_fast_key(key.fast_key()));
  return key;
}

proto::DriverId driver_id(const driver::DriverApi& api) {
  return proto::DriverId{static_cast<std::uint32_t>(api.api_version), api.build};
}

}  // namespace jitcache::client::key
