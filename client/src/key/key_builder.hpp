// The one place a cache key is assembled (docs/cache-key.md): libjitcache's load flow, `jitcache
// warm`, `jitcache get --source` and `jitcache put` all build their keys here, so a key warmed or
// put by hand is the key a program looks up. Its stages, in the order the load flow runs them:
//
//   source   the PTX an image holds for the device (image_source.hpp: classification, fat binary walk)
//   version  can this driver JIT that PTX at all (its `.version` against the driver's newest ISA)
//   options  the canonical option string (proto/jit_options.hpp) from the JIT option arrays the
//            driver would receive, or from the CLI's text form, plus a fat binary entry's ptxas options
//   key      arch (key_arch.hpp: the device, CU_JIT_TARGET and the PTX `.target`, or an arch named
//            outright), driver API and build, options, key schema; the fast key's XXH3-128 at once,
//            the content digest (SHA-256 based) on other threads while the caller looks the fast key up
//
// A failure is an Error whose message says why the load is uncacheable (ErrorCode::unsupported or
// invalid_argument, as the canonicaliser and validate_fast_key give them); callers word it.
// Thread safety: KeyBuilder is an immutable value; a BuiltKey belongs to one caller.
#pragma once

#include <cuda.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <client/src/driver/device_query.hpp>
#include <client/src/driver/driver_api.hpp>
#include <client/src/key/embedded_ptxas_options.hpp>
#include <proto/content_digest.hpp>
#include <proto/jit_options.hpp>
#include <proto/key.hpp>

namespace jitcache::client::key {

// A key's fields for one PTX source. The content digest is filled in by complete(), after
// start_digest() (or there, on the calling thread); everything else is there from the start.
// Borrows the PTX text it was built from: the text must outlive it.
class BuiltKey {
 public:
  BuiltKey(proto::KeyFields fields, proto::Checksum128 content_fast, std::string_view ptx)
      : m_fields(std::move(fields)), m_content_fast(content_fast), m_ptx(ptx) {}

  // Every field; `content` is all zeros until complete() has run.
  const proto::KeyFields& fields() const { return m_fields; }
  const proto::Checksum128& content_fast() const { return m_content_fast; }
  proto::FastKey fast_key() const { return proto::fast_key_of(m_fields, m_content_fast); }

  // Starts the content digest on other threads (proto::ContentDigestTask); idempotent.
  void start_digest();
  // The whole key: waits for the digest (computing it here if it was never started).
  const proto::KeyFields& complete();

 private:
  friend class KeyBuilder;  // build() fills m_content_fast after it may have started the digest

  proto::KeyFields m_fields;
  proto::Checksum128 m_content_fast;
  std::string_view m_ptx;
  std::unique_ptr<proto::ContentDigestTask> m_digest;  // not movable itself: the threads hold its address
  bool m_complete = false;
};

class KeyBuilder {
 public:
  // The key a program builds on `device` with this driver: the arch follows the driver's JIT.
  static KeyBuilder for_device(const driver::ComputeCapability& device, proto::DriverId driver);
  // The key of an arch named outright (`jitcache put/get --arch`), kept exactly as named.
  static KeyBuilder for_arch(std::string arch, proto::DriverId driver);

  const proto::DriverId& driver() const { return m_driver; }

  // version: an error (ErrorCode::unsupported) when the PTX's `.version` is newer than the newest
  // ISA this driver JIT-compiles (driver_identity.hpp max_ptx_isa); PTX without one passes.
  common::Result<void> check_ptx_version(std::string_view ptx) const;

  // options: JIT option arrays exactly as the driver would receive them (the caller's with a fat
  // binary entry's embedded options added: loader::CallerOptions::with).
  static common::Result<proto::CanonicalOptions> options_from_jit(unsigned count, const CUjit_option* options,
                                                                  void* const* values);
  // options: the CLI's text form ("opt=3;maxrreg=32", "" = all defaults) or a fat binary entry's
  // embedded options; both at once is ErrorCode::unsupported (which would the user mean?).
  static common::Result<proto::CanonicalOptions> options_from_text(std::string_view text,
                                                                   const std::vector<JitOptionValue>& embedded);

  // key: the fields for `ptx` compiled with `options`, validated (proto::validate_fast_key).
  // With Digest::in_background the content digest starts before the fast key's XXH3-128 is
  // computed, so that the two hashes of the same bytes overlap (complete() then mostly finds it done).
  enum class Digest { on_complete, in_background };
  common::Result<BuiltKey> build(std::string_view ptx, const proto::CanonicalOptions& options,
                                 Digest digest = Digest::on_complete) const;

 private:
  KeyBuilder(std::optional<driver::ComputeCapability> device, std::string arch, proto::DriverId driver)
      : m_device(device), m_arch(std::move(arch)), m_driver(std::move(driver)) {}

  std::optional<driver::ComputeCapability> m_device;
  std::string m_arch;  // used when there is no device
  proto::DriverId m_driver;
};

// The driver field of keys built for this process: cuDriverGetVersion and the build it loaded.
proto::DriverId driver_id(const driver::DriverApi& api);

}  // namespace jitcache::client::key
