// The fat binary walker (client/src/fatbin): fat binaries made by nvcc at test-build time parse to
// the entries nvcc was asked for, decompress to what an uncompressed build holds, select the image
// the driver would use, and malformed input of every kind is an Error, never a crash (the suite also
// runs under ASan/UBSan).
#include <client/src/fatbin/elf_extent.hpp>
#include <client/src/fatbin/fatbin_format.hpp>
#include <client/src/fatbin/fatbin_reader.hpp>
#include <client/src/fatbin/image_kind.hpp>
#include <client/src/fatbin/little_endian.hpp>
#include <client/src/fatbin/select_image.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <tests/support/test_skip.hpp>
#include <vector>

namespace fb = jitcache::client::fatbin;
using jitcache::common::ErrorCode;

namespace {

using Bytes = std::vector<std::byte>;

const std::string k_fixture_dir = JITCACHE_FATBIN_FIXTURE_DIR;

// Fixtures need nvcc at build time; without it the tests that need them say so and stop.
bool have_fixtures() {
  if (k_fixture_dir.empty()) {
    JITCACHE_MARK_SKIPPED("nvcc was not found when the tests were built, so there are no fat binary fixtures");
    return false;
  }
  return true;
}

Bytes load(const std::string& name) {
  const auto path = std::filesystem::path(k_fixture_dir) / (name + ".fatbin");
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Bytes bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

fb::FatBinary parse_ok(const Bytes& bytes) {
  auto parsed = fb::read_fatbin(bytes);
  INFO((parsed ? std::string() : parsed.error().message));
  REQUIRE(parsed.ok());
  return std::move(parsed).value();
}

// A fixture and its parse: uncompressed entries view the bytes, so the two travel together (moving a
// vector keeps its buffer).
struct Parsed {
  Bytes bytes;
  fb::FatBinary fat;
};

Parsed parse_fixture(const std::string& name) {
  Parsed parsed{load(name), {}};
  parsed.fat = parse_ok(parsed.bytes);
  return parsed;
}

const fb::Entry* find(const fb::FatBinary& fat, fb::EntryKind kind) {
  for (const auto& entry : fat.entries) {
    if (entry.kind == kind) return &entry;
  }
  return nullptr;
}

bool starts_with_elf(std::span<const std::byte> bytes) {
  return bytes.size() >= 4 && bytes[0] == std::byte{0x7F} && bytes[1] == std::byte{'E'} && bytes[2] == std::byte{'L'} &&
         bytes[3] == std::byte{'F'};
}

template <class T>
void put(Bytes& bytes, std::size_t offset, T value) {
  REQUIRE(offset + sizeof(T) <= bytes.size());
  std::memcpy(bytes.data() + offset, &value, sizeof(T));
}

const fb::DeviceTarget k_cc90{9, 0, false, false};
const fb::DeviceTarget k_cc90a{9, 0, true, false};
const fb::PtxIsa k_driver_ptx{9, 0};

fb::Selection select_ok(const fb::FatBinary& fat, const fb::DeviceTarget& device) {
  auto chosen = fb::select_image(fat.entries, device, k_driver_ptx);
  INFO((chosen ? std::string() : chosen.error().message));
  REQUIRE(chosen.ok());
  return *chosen;
}

const std::vector<std::string> k_all_fixtures{"sm80_compute80",
                                              "sm80",
                                              "sm90",
                                              "sm90a",
                                              "compute90",
                                              "sm80_sm90_compute90",
                                              "sm90_compute90_plain",
                                              "sm90_compute90_zstd",
                                              "sm90_compute90_lz4",
                                              "compute90_options"};

}  // namespace

TEST_CASE("fatbin reader: sm_80 + compute_80 holds an sm_80 cubin and compute_80 PTX", "[fatbin]") {
  if (!have_fixtures()) return;
  const auto fat_fixture = parse_fixture("sm80_compute80");
  const auto& fat = fat_fixture.fat;
  CHECK(fat.containers == 1);
  REQUIRE(fat.entries.size() == 2);
  const auto* cubin = find(fat, fb::EntryKind::cubin);
  const auto* ptx = find(fat, fb::EntryKind::ptx);
  REQUIRE(cubin);
  REQUIRE(ptx);
  CHECK(cubin->arch == fb::Arch{80, fb::ArchVariant::plain});
  CHECK(starts_with_elf(cubin->bytes));
  CHECK(ptx->arch == fb::Arch{80, fb::ArchVariant::plain});
  // CUDA 13 compresses PTX with zstd by default (docs/driver-facts.md §3).
  CHECK(ptx->compression == fb::Compression::zstd);
  CHECK(ptx->ptx_text().find(".target sm_80") != std::string_view::npos);
  const auto version = ".version " + std::to_string(ptx->version_major) + "." + std::to_string(ptx->version_minor);
  CHECK(ptx->ptx_text().find(version) != std::string_view::npos);
  CHECK(ptx->ptx_text().find(".entry scale") != std::string_view::npos);
}

TEST_CASE("fatbin reader: an sm_90-only build holds one cubin and no PTX", "[fatbin]") {
  if (!have_fixtures()) return;
  const auto fat_fixture = parse_fixture("sm90");
  const auto& fat = fat_fixture.fat;
  REQUIRE(fat.entries.size() == 1);
  CHECK(fat.entries[0].kind == fb::EntryKind::cubin);
  CHECK(fat.entries[0].arch == fb::Arch{90, fb::ArchVariant::plain});
  CHECK(fat.entries[0].compression == fb::Compression::none);
  CHECK(starts_with_elf(fat.entries[0].bytes));
}

TEST_CASE("fatbin reader: an sm_90a build is marked arch-specific", "[fatbin]") {
  if (!have_fixtures()) return;
  const auto fat_fixture = parse_fixture("sm90a");
  const auto& fat = fat_fixture.fat;
  REQUIRE(fat.entries.size() == 1);
  CHECK(fat.entries[0].kind == fb::EntryKind::cubin);
  CHECK(fat.entries[0].arch == fb::Arch{90, fb::ArchVariant::arch_specific});
  CHECK(fb::arch_name(fat.entries[0].arch) == "sm_90a");
}

TEST_CASE("fatbin reader: a compute_90-only build holds PTX only", "[fatbin]") {
  if (!have_fixtures()) return;
  const auto fat_fixture = parse_fixture("compute90");
  const auto& fat = fat_fixture.fat;
  REQUIRE(fat.entries.size() == 1);
  const auto& ptx = fat.entries[0];
  CHECK(ptx.kind == fb::EntryKind::ptx);
  CHECK(ptx.arch.sm == 90);
  CHECK(ptx.version_major >= 7);
  CHECK(ptx.ptx_text().find(".target sm_90") != std::string_view::npos);
  CHECK(ptx.ptxas_options.empty());
}

TEST_CASE("fatbin reader: sm_80, sm_90 and compute_90 give three entries", "[fatbin]") {
  if (!have_fixtures()) return;
  const auto fat_fixture = parse_fixture("sm80_sm90_compute90");
  const auto& fat = fat_fixture.fat;
  REQUIRE(fat.entries.size() == 3);
  int cubins_80 = 0, cubins_90 = 0, ptx_90 = 0;
  for (const auto& e : fat.entries) {
    if (e.kind == fb::EntryKind::cubin && e.arch.sm == 80) ++cubins_80;
    if (e.kind == fb::EntryKind::cubin && e.arch.sm == 90) ++cubins_90;
    if (e.kind == fb::EntryKind::ptx && e.arch.sm == 90) ++ptx_90;
  }
  CHECK(cubins_80 == 1);
  CHECK(cubins_90 == 1);
  CHECK(ptx_90 == 1);
}

TEST_CASE("fatbin reader: the ptxas options embedded with PTX are returned", "[fatbin]") {
  if (!have_fixtures()) return;
  const auto fat_fixture = parse_fixture("compute90_options");
  const auto& fat = fat_fixture.fat;
  const auto* ptx = find(fat, fb::EntryKind::ptx);
  REQUIRE(ptx);
  CHECK(ptx->ptxas_options.find("-O2") != std::string::npos);
  CHECK(ptx->ptxas_options.find("--generate-line-info") != std::string::npos);
}

TEST_CASE("fatbin reader: zstd and lz4 entries decompress to what an uncompressed build holds", "[fatbin]") {
  if (!have_fixtures()) return;
  const auto plain_fixture = parse_fixture("sm90_compute90_plain");
  const auto& plain = plain_fixture.fat;
  const auto* plain_cubin = find(plain, fb::EntryKind::cubin);
  const auto* plain_ptx = find(plain, fb::EntryKind::ptx);
  REQUIRE(plain_cubin);
  REQUIRE(plain_ptx);
  CHECK(plain_cubin->compression == fb::Compression::none);
  CHECK(plain_ptx->compression == fb::Compression::none);

  for (const auto& [name, mode] : {std::pair{"sm90_compute90_zstd", fb::Compression::zstd},
                                   std::pair{"sm90_compute90_lz4", fb::Compression::lz4}}) {
    INFO(name);
    const auto fat_fixture = parse_fixture(name);
    const auto& fat = fat_fixture.fat;
    const auto* cubin = find(fat, fb::EntryKind::cubin);
    const auto* ptx = find(fat, fb::EntryKind::ptx);
    REQUIRE(cubin);
    REQUIRE(ptx);
    CHECK(cubin->compression == mode);
    CHECK(ptx->compression == mode);
    CHECK(ptx->ptx_text() == plain_ptx->ptx_text());
    // The uncompressed payload may carry NUL padding to 8 bytes after the ELF.
    REQUIRE(cubin->bytes.size() <= plain_cubin->bytes.size());
    CHECK(std::equal(cubin->bytes.begin(), cubin->bytes.end(), plain_cubin->bytes.begin()));
    CHECK(std::all_of(plain_cubin->bytes.begin() + static_cast<std::ptrdiff_t>(cubin->bytes.size()),
                      plain_cubin->bytes.end(), [](std::byte b) { return b == std::byte{0}; }));
  }
}

TEST_CASE("fatbin reader: containers back to back are all read", "[fatbin]") {
  if (!have_fixtures()) return;
  auto bytes = load("sm80");
  const auto second = load("compute90");
  bytes.insert(bytes.end(), second.begin(), second.end());
  const auto fat = parse_ok(bytes);
  CHECK(fat.containers == 2);
  REQUIRE(fat.entries.size() == 2);
  CHECK(fat.entries[0].kind == fb::EntryKind::cubin);
  CHECK(fat.entries[1].kind == fb::EntryKind::ptx);
  CHECK(fat.entries[1].offset > load("sm80").size() - 1);
  // The chosen PTX comes from the second container.
  const auto chosen = select_ok(fat, k_cc90);
  CHECK(chosen.action == fb::Action::jit_ptx);
  CHECK(chosen.entry_index == 1);
}

TEST_CASE("fatbin reader: an nvcc wrapper is followed to its container", "[fatbin]") {
  if (!have_fixtures()) return;
  const auto container = load("sm80_sm90_compute90");
  // The 24-byte __fatBinC_Wrapper_t: magic, version 1, data pointer, filename_or_fatbins.
  Bytes wrapper(fb::k_wrapper_size);
  put<std::uint32_t>(wrapper, 0, fb::k_wrapper_magic);
  put<std::uint32_t>(wrapper, 4, 1);
  put<std::uintptr_t>(wrapper, 8, reinterpret_cast<std::uintptr_t>(container.data()));
  const auto fat = parse_ok(wrapper);
  CHECK(fat.entries.size() == 3);

  auto view = fb::classify_image(wrapper.data());
  REQUIRE(view.ok());
  CHECK(view->kind == fb::ImageKind::fatbin);
  CHECK(view->via_wrapper);
  CHECK(view->bytes.data() == container.data());
  CHECK(view->bytes.size() == container.size());

  SECTION("a null data pointer is refused") {
    put<std::uintptr_t>(wrapper, 8, 0);
    auto bad = fb::read_fatbin(wrapper);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().code == ErrorCode::invalid_argument);
  }
  SECTION("an unknown wrapper version is refused") {
    put<std::uint32_t>(wrapper, 4, 7);
    auto bad = fb::read_fatbin(wrapper);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message.find("version 7") != std::string::npos);
  }
  SECTION("a truncated wrapper is refused") {
    auto bad = fb::read_fatbin(std::span<const std::byte>(wrapper).first(12));
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().code == ErrorCode::corrupt);
  }
}

TEST_CASE("fatbin image kind: a pointer is classified and sized without a length", "[fatbin]") {
  SECTION("PTX text is sized up to its NUL") {
    const char* text = ".version 9.0\n.target sm_90\n";
    auto view = fb::classify_image(text);
    REQUIRE(view.ok());
    CHECK(view->kind == fb::ImageKind::ptx);
    CHECK(view->bytes.size() == std::strlen(text));
  }
  SECTION("a one-character string is PTX and is not read past its NUL") {
    auto heap = std::make_unique<char[]>(2);
    heap[0] = 0x7F;  // the first byte of the ELF magic
    heap[1] = '\0';
    auto view = fb::classify_image(heap.get());
    REQUIRE(view.ok());
    CHECK(view->kind == fb::ImageKind::ptx);
    CHECK(view->bytes.size() == 1);
  }
  SECTION("empty text and null are refused") {
    auto empty = fb::classify_image("");
    REQUIRE_FALSE(empty.ok());
    CHECK(empty.error().code == ErrorCode::invalid_argument);
    auto null = fb::classify_image(nullptr);
    REQUIRE_FALSE(null.ok());
    CHECK(null.error().code == ErrorCode::invalid_argument);
  }
  if (!have_fixtures()) return;
  SECTION("a fat binary container is sized by its header") {
    const auto bytes = load("sm90_compute90_zstd");
    auto view = fb::classify_image(bytes.data());
    REQUIRE(view.ok());
    CHECK(view->kind == fb::ImageKind::fatbin);
    CHECK_FALSE(view->via_wrapper);
    CHECK(view->bytes.size() == bytes.size());
  }
  SECTION("a cubin is sized by its ELF headers") {
    const auto fat_fixture = parse_fixture("sm90");
    const auto& fat = fat_fixture.fat;
    const Bytes cubin(fat.entries[0].bytes.begin(), fat.entries[0].bytes.end());
    auto view = fb::classify_image(cubin.data());
    REQUIRE(view.ok());
    CHECK(view->kind == fb::ImageKind::cubin);
    REQUIRE(view->bytes.size() <= cubin.size());
    CHECK(view->bytes.size() + 8 > cubin.size());  // only the payload's padding is left out
    auto bounded = fb::elf_extent(cubin.data(), cubin.size());
    REQUIRE(bounded.ok());
    CHECK(*bounded == view->bytes.size());
  }
}

TEST_CASE("fatbin elf extent: a cubin cut short at any length is reported truncated", "[fatbin]") {
  if (!have_fixtures()) return;
  const auto fat_fixture = parse_fixture("sm80");
  const auto& fat = fat_fixture.fat;
  const auto& cubin = fat.entries[0].bytes;
  auto full = fb::elf_extent(cubin.data(), cubin.size());
  REQUIRE(full.ok());
  for (std::size_t length = 0; length < *full; ++length) {
    // Copy into an exact-size buffer so that ASan would catch any read past `length`.
    const Bytes cut(cubin.begin(), cubin.begin() + static_cast<std::ptrdiff_t>(length));
    auto result = fb::elf_extent(cut.data(), cut.size());
    INFO("length " << length);
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().code == ErrorCode::corrupt);
  }
}

TEST_CASE("fatbin select image: CC 9.0 chooses as the driver does", "[fatbin]") {
  if (!have_fixtures()) return;
  SECTION("the sm_90 cubin when one is present") {
    const auto fat_fixture = parse_fixture("sm80_sm90_compute90");
    const auto& fat = fat_fixture.fat;
    const auto chosen = select_ok(fat, k_cc90);
    CHECK(chosen.action == fb::Action::load_cubin);
    CHECK(fat.entries[chosen.entry_index].kind == fb::EntryKind::cubin);
    CHECK(fat.entries[chosen.entry_index].arch.sm == 90);
  }
  SECTION("compute_90 PTX when only PTX can serve") {
    const auto fat_fixture = parse_fixture("compute90");
    const auto& fat = fat_fixture.fat;
    const auto chosen = select_ok(fat, k_cc90);
    CHECK(chosen.action == fb::Action::jit_ptx);
    CHECK(fat.entries[chosen.entry_index].arch.sm == 90);
  }
  SECTION("compute_80 PTX rather than the sm_80 cubin, which CC 9.0 cannot run") {
    const auto fat_fixture = parse_fixture("sm80_compute80");
    const auto& fat = fat_fixture.fat;
    const auto chosen = select_ok(fat, k_cc90);
    CHECK(chosen.action == fb::Action::jit_ptx);
    CHECK(fat.entries[chosen.entry_index].kind == fb::EntryKind::ptx);
    CHECK(fat.entries[chosen.entry_index].arch.sm == 80);
  }
  SECTION("an sm_80 cubin alone is refused with a message listing it") {
    const auto fat_fixture = parse_fixture("sm80");
    const auto& fat = fat_fixture.fat;
    auto chosen = fb::select_image(fat.entries, k_cc90, k_driver_ptx);
    REQUIRE_FALSE(chosen.ok());
    CHECK(chosen.error().code == ErrorCode::unsupported);
    CHECK(chosen.error().message.find("no image for this device") != std::string::npos);
    CHECK(chosen.error().message.find("CC 9.0") != std::string::npos);
    CHECK(chosen.error().message.find("sm_80 cubin") != std::string::npos);
  }
  SECTION("sm_90a only on a device that accepts arch-specific code") {
    const auto fat_fixture = parse_fixture("sm90a");
    const auto& fat = fat_fixture.fat;
    auto plain_device = fb::select_image(fat.entries, k_cc90, k_driver_ptx);
    REQUIRE_FALSE(plain_device.ok());
    CHECK(plain_device.error().message.find("sm_90a cubin") != std::string::npos);
    const auto chosen = select_ok(fat, k_cc90a);
    CHECK(chosen.action == fb::Action::load_cubin);
    CHECK(fb::select_image(fat.entries, fb::DeviceTarget{9, 1, true, false}, k_driver_ptx).ok() == false);
  }
  SECTION("PTX newer than the driver can JIT is not chosen") {
    const auto fat_fixture = parse_fixture("compute90");
    const auto& fat = fat_fixture.fat;
    auto chosen = fb::select_image(fat.entries, k_cc90, fb::PtxIsa{7, 0});
    REQUIRE_FALSE(chosen.ok());
    CHECK(chosen.error().message.find("newer driver") != std::string::npos);
  }
  SECTION("an sm_80 cubin runs on a later minor of its major, not on an earlier one") {
    const auto fat_fixture = parse_fixture("sm80");
    const auto& fat = fat_fixture.fat;
    CHECK(select_ok(fat, fb::DeviceTarget{8, 6, false, false}).action == fb::Action::load_cubin);
    const auto sm90_fixture = parse_fixture("sm90");
    const auto& sm90 = sm90_fixture.fat;
    CHECK_FALSE(fb::select_image(sm90.entries, fb::DeviceTarget{8, 9, false, false}, k_driver_ptx).ok());
  }
}

TEST_CASE("fatbin select image: family and arch-specific rules on synthetic entries", "[fatbin]") {
  auto entry = [](fb::EntryKind kind, unsigned sm, fb::ArchVariant variant) {
    fb::Entry e;
    e.kind = kind;
    e.arch = fb::Arch{sm, variant};
    e.version_major = 9;
    return e;
  };
  const std::vector<fb::Entry> family{entry(fb::EntryKind::cubin, 100, fb::ArchVariant::family)};
  CHECK(fb::select_image(family, fb::DeviceTarget{10, 3, true, true}, k_driver_ptx).ok());
  CHECK_FALSE(fb::select_image(family, fb::DeviceTarget{10, 3, true, false}, k_driver_ptx).ok());
  CHECK_FALSE(fb::select_image(family, fb::DeviceTarget{12, 0, true, true}, k_driver_ptx).ok());

  const std::vector<fb::Entry> mixed{entry(fb::EntryKind::cubin, 90, fb::ArchVariant::plain),
                                     entry(fb::EntryKind::cubin, 90, fb::ArchVariant::arch_specific),
                                     entry(fb::EntryKind::ptx, 90, fb::ArchVariant::plain)};
  auto on_90a = fb::select_image(mixed, k_cc90a, k_driver_ptx);
  REQUIRE(on_90a.ok());
  CHECK(on_90a->entry_index == 1);
  auto on_90 = fb::select_image(mixed, k_cc90, k_driver_ptx);
  REQUIRE(on_90.ok());
  CHECK(on_90->entry_index == 0);
  auto on_100 = fb::select_image(mixed, fb::DeviceTarget{10, 0, true, true}, k_driver_ptx);
  REQUIRE(on_100.ok());
  CHECK(on_100->action == fb::Action::jit_ptx);
  CHECK(on_100->entry_index == 2);

  const std::vector<fb::Entry> lto{entry(fb::EntryKind::lto_ir, 90, fb::ArchVariant::plain)};
  CHECK_FALSE(fb::select_image(lto, k_cc90, k_driver_ptx).ok());
  CHECK_FALSE(fb::select_image({}, k_cc90, k_driver_ptx).ok());
}

TEST_CASE("fatbin reader: empty input and bad magic are invalid arguments", "[fatbin]") {
  auto empty = fb::read_fatbin({});
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().code == ErrorCode::invalid_argument);

  const char text[] = ".version 9.0\n.target sm_90\n.address_size 64\n";
  auto ptx = fb::read_fatbin(std::as_bytes(std::span(text)));
  REQUIRE_FALSE(ptx.ok());
  CHECK(ptx.error().code == ErrorCode::invalid_argument);
  CHECK(ptx.error().message.find("bad magic") != std::string::npos);

  if (!have_fixtures()) return;
  auto bytes = load("sm80");
  const auto good_size = bytes.size();
  bytes.insert(bytes.end(), bytes.begin(), bytes.end());
  put<std::uint32_t>(bytes, good_size, 0x12345678);
  auto second = fb::read_fatbin(bytes);
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().code == ErrorCode::corrupt);
  CHECK(second.error().message.find("offset " + std::to_string(good_size)) != std::string::npos);
}

// Regression (fuzz_fatbin): fewer than 16 bytes of something else were a "truncated" container
// (corrupt) rather than not a fat binary at all (invalid_argument), as the reader's contract says.
TEST_CASE("fatbin reader: a few bytes that are not a fat binary are an invalid argument, not a truncated one",
          "[fatbin]") {
  const auto read = [](Bytes bytes) { return fb::read_fatbin(bytes); };
  const auto text = [](std::string_view s) {
    Bytes bytes(s.size());
    std::memcpy(bytes.data(), s.data(), s.size());
    return bytes;
  };
  for (const auto& short_text : {text("PT"), text("PTX"), text(".version 9")}) {
    auto result = read(short_text);
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().code == ErrorCode::invalid_argument);
  }
  Bytes old_style(12);
  put<std::uint32_t>(old_style, 0, fb::k_old_style_magic);
  auto old = read(old_style);
  REQUIRE_FALSE(old.ok());
  CHECK(old.error().code == ErrorCode::invalid_argument);
  CHECK(old.error().message.find("pre-CUDA-4") != std::string::npos);

  // A container's magic with too little after it is still a truncated container.
  Bytes cut(12);
  put<std::uint32_t>(cut, 0, fb::k_container_magic);
  auto truncated = read(cut);
  REQUIRE_FALSE(truncated.ok());
  CHECK(truncated.error().code == ErrorCode::corrupt);
  CHECK(truncated.error().message.find("truncated") != std::string::npos);
}

TEST_CASE("fatbin reader: every truncation of every fixture is an error", "[fatbin]") {
  if (!have_fixtures()) return;
  for (const auto& name : k_all_fixtures) {
    const auto bytes = load(name);
    for (std::size_t length = 0; length < bytes.size(); ++length) {
      // An exact-size copy: ASan reports any read past `length`.
      const Bytes cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(length));
      auto result = fb::read_fatbin(cut);
      INFO(name << " cut to " << length << " bytes");
      REQUIRE_FALSE(result.ok());
    }
  }
}

TEST_CASE("fatbin reader: lying size fields are errors naming the field", "[fatbin]") {
  if (!have_fixtures()) return;
  const auto original = load("sm90_compute90_zstd");
  const auto fat = parse_ok(original);
  REQUIRE(fat.entries.size() == 2);
  const auto* ptx = find(fat, fb::EntryKind::ptx);
  REQUIRE(ptx);
  const std::size_t entry = ptx->offset;
  namespace field = fb::entry_field;

  struct Lie {
    const char* what;
    std::size_t offset;
    std::uint64_t value;
    int width;
    const char* expected;
  };
  const std::vector<Lie> lies{
      {"container fat size", 8, ~std::uint64_t{0}, 8, "bytes of entries"},
      {"container header size", 6, 0xFFFF, 2, "header size"},
      {"entry header size", entry + field::header_size, 0xFFFFFFFF, 4, "header size"},
      {"entry header size too small", entry + field::header_size, 8, 4, "header size"},
      {"payload size", entry + field::payload_size, ~std::uint64_t{0} - 7, 8, "payload size"},
      {"compressed size", entry + field::compressed_size, 0xFFFFFFF0, 4, "compressed size"},
      {"uncompressed size huge", entry + field::uncompressed_size, std::uint64_t{1} << 40, 8, "over the limit"},
      {"uncompressed size off by one", entry + field::uncompressed_size, ptx->bytes.size() + 1, 8, "claims"},
      {"uncompressed size zero", entry + field::uncompressed_size, 0, 8, "size of 0"},
      {"options descriptor", entry + field::options_descriptor, 0xFFFFFFF8, 4, "options descriptor"},
      {"name length", entry + field::name_length, 0xFFFFFFFF, 4, "file name"},
      {"both compressions", entry + field::flags, fb::k_flag_lz4 | fb::k_flag_zstd | 0x11, 8, "both"},
  };
  for (const auto& lie : lies) {
    auto bytes = original;
    if (std::string(lie.what) == "name length") put<std::uint32_t>(bytes, entry + field::name_offset, 64);
    switch (lie.width) {
      case 2: put<std::uint16_t>(bytes, lie.offset, static_cast<std::uint16_t>(lie.value)); break;
      case 4: put<std::uint32_t>(bytes, lie.offset, static_cast<std::uint32_t>(lie.value)); break;
      default: put<std::uint64_t>(bytes, lie.offset, lie.value); break;
    }
    auto result = fb::read_fatbin(bytes);
    INFO(lie.what);
    REQUIRE_FALSE(result.ok());
    INFO(result.error().message);
    CHECK(result.error().message.find(lie.expected) != std::string::npos);
  }
}

TEST_CASE("fatbin reader: an lz4 entry claiming more than it holds is refused", "[fatbin]") {
  if (!have_fixtures()) return;
  const auto original = load("sm90_compute90_lz4");
  const auto fat = parse_ok(original);
  const auto* cubin = find(fat, fb::EntryKind::cubin);
  REQUIRE(cubin);
  for (std::uint64_t claim : {cubin->bytes.size() + 1, cubin->bytes.size() - 1, std::uint64_t{1} << 29}) {
    auto bytes = original;
    put<std::uint64_t>(bytes, cubin->offset + fb::entry_field::uncompressed_size, claim);
    auto result = fb::read_fatbin(bytes);
    INFO("claimed " << claim);
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().code == ErrorCode::corrupt);
  }
}

TEST_CASE("fatbin reader: the decompressed size cap stops a decompression bomb", "[fatbin]") {
  if (!have_fixtures()) return;
  const auto bytes = load("sm90_compute90_zstd");
  auto capped = fb::read_fatbin(bytes, fb::ReadLimits{256});
  REQUIRE_FALSE(capped.ok());
  CHECK(capped.error().code == ErrorCode::too_large);
  CHECK(capped.error().message.find("over the limit of 256") != std::string::npos);
}

TEST_CASE("fatbin reader: random byte flips never crash", "[fatbin]") {
  if (!have_fixtures()) return;
  std::mt19937 rng(20261130);
  for (const auto& name : k_all_fixtures) {
    const auto original = load(name);
    // Headers are where lies do harm: flip there most, and anywhere else too.
    std::uniform_int_distribution<std::size_t> header_pos(0, std::min<std::size_t>(original.size(), 256) - 1);
    std::uniform_int_distribution<std::size_t> any_pos(0, original.size() - 1);
    std::uniform_int_distribution<int> value(0, 255);
    for (int round = 0; round < 400; ++round) {
      auto bytes = original;
      for (int flips = 0; flips < 1 + round % 4; ++flips) {
        const auto pos = round % 2 ? header_pos(rng) : any_pos(rng);
        bytes[pos] = static_cast<std::byte>(value(rng));
      }
      auto result = fb::read_fatbin(bytes);
      if (result.ok()) {
        for (const auto& e : result->entries) CHECK(e.bytes.size() <= fb::k_default_max_decompressed);
      } else {
        CHECK_FALSE(result.error().message.empty());
      }
    }
  }
}

TEST_CASE("fatbin reader: with deferred decompression only the entry asked for is decompressed", "[fatbin]") {
  if (!have_fixtures()) return;
  const auto original = load("sm90_compute90_lz4");
  const auto reference = parse_ok(original);
  const auto* reference_cubin = find(reference, fb::EntryKind::cubin);
  const auto* reference_ptx = find(reference, fb::EntryKind::ptx);
  REQUIRE(reference_cubin);
  REQUIRE(reference_ptx);
  // The cubin's compressed payload is damaged: an eager read refuses the whole fat binary, a deferred
  // one reads the headers and decompresses the PTX alone.
  auto bytes = original;
  const std::size_t header_size =
      fb::load_le<std::uint32_t>(bytes, reference_cubin->offset + fb::entry_field::header_size);
  for (std::size_t i = 0; i < 32; ++i) bytes[reference_cubin->offset + header_size + i] = std::byte{0xA5};
  REQUIRE_FALSE(fb::read_fatbin(bytes).ok());
  fb::ReadLimits limits;
  limits.defer_decompression = true;
  auto deferred = fb::read_fatbin(bytes, limits);
  INFO((deferred ? std::string() : deferred.error().message));
  REQUIRE(deferred.ok());
  fb::FatBinary fat = std::move(deferred).value();
  for (const auto& entry : fat.entries) CHECK(entry.awaits_decompression());
  auto ptx = std::find_if(fat.entries.begin(), fat.entries.end(), [](auto& e) { return e.kind == fb::EntryKind::ptx; });
  REQUIRE(ptx != fat.entries.end());
  REQUIRE(fb::decompress_entry(*ptx, limits).ok());
  CHECK(ptx->ptx_text() == reference_ptx->ptx_text());
  auto cubin =
      std::find_if(fat.entries.begin(), fat.entries.end(), [](auto& e) { return e.kind == fb::EntryKind::cubin; });
  REQUIRE(cubin != fat.entries.end());
  CHECK_FALSE(fb::decompress_entry(*cubin, limits).ok());
}
