#include <daemon/remote/compile_ask.hpp>

#include <array>

#include <proto/byte_io.hpp>
#include <proto/content_digest.hpp>

#include <daemon/remote/source_object.hpp>

namespace jitcache::daemon::remote {

namespace {

// "JCAK": the first bytes of every ask, so a value of another kind is told apart at once.
constexpr std::array<std::uint8_t, 4> k_magic{0x4A, 0x43, 0x41, 0x4B};

common::Result<proto::KeyFields> read_key(proto::ByteReader& reader) {
  proto::KeyFields key;
  JITCACHE_TRY_ASSIGN(key.key_schema, reader.u16("key_schema"));
  JITCACHE_TRY_ASSIGN(key.content, reader.digest("content"));
  JITCACHE_TRY_ASSIGN(const std::string_view arch, reader.str16("arch", proto::k_max_arch_length));
  JITCACHE_TRY_ASSIGN(key.driver_api, reader.u32("driver_api"));
  JITCACHE_TRY_ASSIGN(const std::string_view build, reader.str16("driver_build", proto::k_max_driver_build_length));
  JITCACHE_TRY_ASSIGN(const std::string_view options, reader.str16("options", proto::k_max_options_length));
  key.arch = arch;
  key.driver_build = build;
  key.options = options;
  return key;
}

}  // namespace

std::string encode_compile_ask(const proto::KeyFields& key, proto::Bytes ptx) {
  std::vector<std::uint8_t> out;
  proto::ByteWriter writer(out);
  writer.raw(proto::Bytes(k_magic));
  writer.u16(k_compile_ask_version);
  writer.u16(key.key_schema);
  writer.digest(key.content);
  writer.str16(key.arch);
  writer.u32(key.driver_api);
  writer.str16(key.driver_build);
  writer.str16(key.options);
  const std::string source = encode_source_object(ptx);
  if (out.size() + source.size() > k_max_compile_ask_bytes) return {};
  std::string value(out.begin(), out.end());
  value += source;
  return value;
}

std::variant<CompileAsk, std::string> decode_compile_ask(std::string_view value, std::uint64_t max_ptx) {
  if (value.size() > k_max_compile_ask_bytes) return std::string("longer than an ask may be");
  proto::ByteReader reader(proto::as_bytes(value));
  auto magic = reader.bytes(k_magic.size(), "magic");
  if (!magic || !std::equal(magic->begin(), magic->end(), k_magic.begin())) return std::string("not an ask");
  auto version = reader.u16("version");
  if (!version || *version != k_compile_ask_version) return std::string("not an ask of version 1");
  auto key = read_key(reader);
  if (!key) return key.error().message;
  if (auto valid = proto::validate_key(*key); !valid) return valid.error().message;
  auto ptx = decompress_source(value.substr(value.size() - reader.remaining()), max_ptx);
  if (!ptx) return std::string("its PTX is not one zstd frame of at most " + std::to_string(max_ptx) + " bytes");
  // Rationale: the one check that makes the compile the builder's own: the key it files the image
  // under names exactly the bytes it compiled (docs/remote-layout.md "Asks").
  if (!(proto::content_digest(proto::Bytes(*ptx)) == key->content)) {
    return std::string("its PTX does not have the content digest the ask names");
  }
  return CompileAsk{std::move(*key), std::move(*ptx)};
}

}  // namespace jitcache::daemon::remote
