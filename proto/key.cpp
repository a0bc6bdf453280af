#include <proto/key.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <vector>

#include <common/result.hpp>
#include <proto/jit_options.hpp>

namespace jitcache::proto {

namespace {

// Rationale: the tag keeps a key id from ever equalling the SHA-256 of some other structure the
// project hashes (a content digest, a future entry digest), and the NUL ends it unambiguously.
constexpr std::string_view k_key_id_tag{"jitcache-key\0", 13};
constexpr std::string_view k_fast_key_id_tag{"jitcache-fast-key\0", 18};

// Values quoted in messages are cut here: a message travels in a str16 of at most 1024 bytes
// (PROTOCOL.md §3) and must still name the field after the value.
constexpr std::size_t k_max_quoted_length = 80;

void put_u16(std::vector<std::uint8_t>& out, std::uint16_t v) {
  out.push_back(static_cast<std::uint8_t>(v));
  out.push_back(static_cast<std::uint8_t>(v >> 8));
}

void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<std::uint8_t>(v >> shift));
}

// Rationale: a u32 length, not the wire's u16, so the encoding stays injective for any KeyFields,
// including unvalidated ones whose strings exceed the wire limits.
void put_string(std::vector<std::uint8_t>& out, std::string_view s) {
  put_u32(out, static_cast<std::uint32_t>(s.size()));
  out.insert(out.end(), s.begin(), s.end());
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Printable ASCII other than space: what a driver build string looks like, and safe to show in
// a terminal, a log line or a SQL column without escaping.
bool is_build_char(char c) { return c > ' ' && c <= '~'; }

// Shows a value the way a message should: quoted, control bytes escaped, long values cut.
std::string quoted(std::string_view value) {
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out = "\"";
  for (std::size_t i = 0; i < value.size() && i < k_max_quoted_length; ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < ' ' || c > '~') {
      out += "\\x";
      out.push_back(k_hex[c >> 4]);
      out.push_back(k_hex[c & 0xF]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
  if (value.size() > k_max_quoted_length) out += "...";
  return out;
}

common::Error invalid(std::string message) {
  return common::make_error(common::ErrorCode::invalid_argument, std::move(message));
}

// SHA-256 of the tagged, length-prefixed encoding shared by the key id and the fast key id
// (documented at key_id below); only the tag and the content bytes differ between them.
Digest256 key_preimage_digest(std::string_view tag, std::uint16_t schema, Bytes content, std::string_view arch,
                              std::uint32_t driver_api, std::string_view driver_build, std::string_view options) {
  std::vector<std::uint8_t> preimage;
  preimage.reserve(tag.size() + 2 + content.size() + 4 * 4 + arch.size() + driver_build.size() + options.size());
  preimage.insert(preimage.end(), tag.begin(), tag.end());
  put_u16(preimage, schema);
  preimage.insert(preimage.end(), content.begin(), content.end());
  put_string(preimage, arch);
  put_u32(preimage, driver_api);
  put_string(preimage, driver_build);
  put_string(preimage, options);
  return sha256(Bytes(preimage));
}

common::Result<void> check_schema(std::uint16_t schema) {
  if (schema == k_key_schema_version) return {};
  return invalid("key_schema " + std::to_string(schema) + " is not this build's key schema (" +
                 std::to_string(k_key_schema_version) + ")");
}

common::Result<void> check_content(const Digest256& content) {
  // Rationale: SHA-256 of any input is all zeros with negligible probability, whereas a
  // default-constructed KeyFields has exactly that; refusing it catches a key built without content.
  if (content != Digest256{}) return {};
  return invalid("content digest is all zeros: the key's content was never set");
}

common::Result<void> check_arch(std::string_view arch) {
  if (arch.size() > k_max_arch_length) {
    return invalid("arch " + quoted(arch) + " is " + std::to_string(arch.size()) + " bytes, more than " +
                   std::to_string(k_max_arch_length));
  }
  if (!is_valid_arch(arch)) {
    return invalid("arch " + quoted(arch) +
                   " is not of the form sm_<digits>[a|f] (two or more digits, no leading zero), e.g. sm_90a");
  }
  return {};
}

common::Result<void> check_driver_api(std::uint32_t api) {
  if (api > 0) return {};
  return invalid("driver_api 0 is not a driver API version (cuDriverGetVersion, e.g. 13000)");
}

common::Result<void> check_driver_build(std::string_view build) {
  if (build.empty()) return invalid("driver_build is empty (expected the driver build, e.g. 580.159.04)");
  if (build.size() > k_max_driver_build_length) {
    return invalid("driver_build " + quoted(build) + " is " + std::to_string(build.size()) + " bytes, more than " +
                   std::to_string(k_max_driver_build_length));
  }
  for (std::size_t i = 0; i < build.size(); ++i) {
    if (!is_build_char(build[i])) {
      return invalid("driver_build " + quoted(build) + " has a space or a non-printable byte at offset " +
                     std::to_string(i));
    }
  }
  return {};
}

common::Result<void> check_options(const std::string& options) {
  if (options.size() > k_max_options_length) {
    return invalid("options are " + std::to_string(options.size()) + " bytes, more than " +
                   std::to_string(k_max_options_length));
  }
  // Rationale: canonicalising the options was 8% of the daemon's CPU per 4 KB LOOKUP hit
  // (docs/benchmarks.md "The hit path at the limit"), and a program's keys nearly all share one
  // option text. Canonicalisation is a pure function of the text, so a text this thread has found
  // canonical is canonical again: it is remembered and compared instead (one per thread, no lock).
  // Plain bytes, not a std::string: libjitcache runs in other people's threads, and a thread-local
  // with a destructor would run code of ours at their threads' exit.
  thread_local std::array<char, k_max_options_length> last_canonical;
  thread_local std::size_t last_canonical_size = 0;
  if (last_canonical_size != 0 && options.size() == last_canonical_size &&
      std::equal(options.begin(), options.end(), last_canonical.begin())) {
    return {};
  }
  auto canonical = canonicalize_option_text(options);
  if (!canonical) return invalid("options " + quoted(options) + ": " + canonical.error().message);
  // Rationale: two spellings of one option set would be two key ids for one image; only the
  // canonical spelling is a key, so a client that skipped canonicalisation is told, not mis-keyed.
  if (*canonical != options) {
    return invalid("options " + quoted(options) + " are not in canonical form; canonical: " + quoted(*canonical));
  }
  std::copy(options.begin(), options.end(), last_canonical.begin());
  last_canonical_size = options.size();
  return {};
}

}  // namespace

// The key-id preimage (all integers little-endian, every string u32-length-prefixed):
//
//   "jitcache-key" 0x00           13 bytes, domain separation
//   key_schema                    u16
//   content                       32 bytes
//   len(arch)          u32, arch bytes
//   driver_api                    u32
//   len(driver_build)  u32, driver_build bytes
//   len(options)       u32, options bytes
//
// docs/cache-key.md repeats this; tests/unit/test_proto_key.cpp pins one known answer.
Digest256 key_id(const KeyFields& key) {
  return key_preimage_digest(k_key_id_tag, key.key_schema, Bytes(key.content.bytes), key.arch, key.driver_api,
                             key.driver_build, key.options);
}

common::Result<void> validate_key(const KeyFields& key) {
  if (auto r = check_schema(key.key_schema); !r) return r;
  if (auto r = check_content(key.content); !r) return r;
  if (auto r = check_arch(key.arch); !r) return r;
  if (auto r = check_driver_api(key.driver_api); !r) return r;
  if (auto r = check_driver_build(key.driver_build); !r) return r;
  return check_options(key.options);
}

FastKey fast_key_of(const KeyFields& key, const Checksum128& content_fast) {
  return FastKey{key.key_schema, content_fast, key.arch, key.driver_api, key.driver_build, key.options};
}

bool same_fields_but_content(const FastKey& fast, const KeyFields& key) {
  return fast.key_schema == key.key_schema && fast.arch == key.arch && fast.driver_api == key.driver_api &&
         fast.driver_build == key.driver_build && fast.options == key.options;
}

// The fast-key-id preimage: as key_id's, with its own tag and the 16-byte content_fast in place of
// the content digest:
//
//   "jitcache-fast-key" 0x00      18 bytes
//   key_schema u16, content_fast 16 bytes, then arch, driver_api, driver_build, options as key_id's
Digest256 fast_key_id(const FastKey& key) {
  return key_preimage_digest(k_fast_key_id_tag, key.key_schema, Bytes(key.content_fast.bytes), key.arch, key.driver_api,
                             key.driver_build, key.options);
}

common::Result<void> validate_fast_key(const FastKey& key) {
  if (auto r = check_schema(key.key_schema); !r) return r;
  if (key.content_fast == Checksum128{}) return invalid("content_fast is all zeros: the key's content was never set");
  if (auto r = check_arch(key.arch); !r) return r;
  if (auto r = check_driver_api(key.driver_api); !r) return r;
  if (auto r = check_driver_build(key.driver_build); !r) return r;
  return check_options(key.options);
}

// Rationale: a leading zero or a one-digit number would let "sm_090" or "sm_9" name the same
// target as "sm_90" under a different key; compute capabilities are always 10*major + minor.
bool is_valid_arch(std::string_view arch) {
  constexpr std::string_view k_prefix = "sm_";
  if (arch.size() > k_max_arch_length || !arch.starts_with(k_prefix)) return false;
  std::string_view digits = arch.substr(k_prefix.size());
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) digits.remove_suffix(1);
  if (digits.size() < 2 || digits.front() == '0') return false;
  for (char c : digits) {
    if (!is_digit(c)) return false;
  }
  return true;
}

common::Result<DriverId> parse_driver_id(std::string_view text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos) {
    return invalid("driver " + quoted(text) + " is not API/BUILD, e.g. 13000/580.159.04");
  }
  const std::string_view api_text = text.substr(0, slash);
  const std::string_view build_text = text.substr(slash + 1);

  DriverId id;
  bool all_digits = !api_text.empty();
  for (char c : api_text) all_digits = all_digits && is_digit(c);
  const auto parsed = std::from_chars(api_text.data(), api_text.data() + api_text.size(), id.api);
  if (!all_digits || parsed.ec != std::errc() || id.api == 0) {
    return invalid("driver API version " + quoted(api_text) + " is not a number from 1 to " +
                   std::to_string(std::numeric_limits<std::uint32_t>::max()) + " (cuDriverGetVersion, e.g. 13000)");
  }
  JITCACHE_TRY(check_driver_build(build_text));
  id.build = std::string(build_text);
  return id;
}

}  // namespace jitcache::proto
