// The fat binary sections of host executables and shared libraries (client/src/fatbin/host_elf.hpp):
// an ELF file built byte by byte here is read through the same callback `jitcache warm` gives it, its
// .nv_fatbin and __nv_relfatbin sections found and split into containers, and every kind of damage
// (a table, a name or a section outside the file, junk between containers, a container running past
// its section) is an Error naming what broke, never a read outside the file. Real nvcc binaries are
// warmed in tests/integration/test_cli_warm_binaries.cpp.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <client/src/fatbin/host_elf.hpp>

namespace fb = jitcache::client::fatbin;
using jitcache::common::ErrorCode;

namespace {

using Bytes = std::vector<std::byte>;

template <class T>
void put(Bytes& bytes, std::size_t offset, T value) {
  if (bytes.size() < offset + sizeof(T)) bytes.resize(offset + sizeof(T));
  std::memcpy(bytes.data() + offset, &value, sizeof(T));
}

void append(Bytes& bytes, const Bytes& more) { bytes.insert(bytes.end(), more.begin(), more.end()); }

void align(Bytes& bytes, std::size_t to) {
  while (bytes.size() % to != 0) bytes.push_back(std::byte{0});
}

// A fat binary container holding `payload` bytes of entries (not parsed here: only split).
Bytes container(std::size_t payload, std::uint8_t fill) {
  Bytes bytes;
  put<std::uint32_t>(bytes, 0, 0xBA55ED50);
  put<std::uint16_t>(bytes, 4, 1);
  put<std::uint16_t>(bytes, 6, 16);
  put<std::uint64_t>(bytes, 8, payload);
  bytes.resize(16 + payload, std::byte{fill});
  return bytes;
}

struct Section {
  std::string name;
  Bytes contents;
  std::uint32_t type = 1;  // SHT_PROGBITS
};

// An ELF64 little-endian x86-64 file: header, each section's bytes, the name table, then the section
// table (a null section first, the name table last).
Bytes make_elf(const std::vector<Section>& sections, std::uint16_t machine = 62) {
  Bytes file(64);
  std::memcpy(file.data(),
              "\x7f"
              "ELF",
              4);
  file[4] = std::byte{2};  // ELFCLASS64
  file[5] = std::byte{1};  // ELFDATA2LSB
  file[6] = std::byte{1};
  put<std::uint16_t>(file, 16, 3);  // ET_DYN
  put<std::uint16_t>(file, 18, machine);
  put<std::uint32_t>(file, 20, 1);
  put<std::uint16_t>(file, 52, 64);
  put<std::uint16_t>(file, 58, 64);
  std::string names(1, '\0');
  std::vector<std::pair<std::uint64_t, std::uint64_t>> placed;
  std::vector<std::uint32_t> name_offsets;
  for (const Section& section : sections) {
    align(file, 8);
    placed.emplace_back(file.size(), section.contents.size());
    append(file, section.contents);
    name_offsets.push_back(static_cast<std::uint32_t>(names.size()));
    names += section.name + '\0';
  }
  const std::uint32_t shstrtab_name = static_cast<std::uint32_t>(names.size());
  names += std::string(".shstrtab") + '\0';
  const std::uint64_t names_offset = file.size();
  for (char c : names) file.push_back(static_cast<std::byte>(c));
  align(file, 8);
  const std::uint64_t table = file.size();
  const std::size_t count = sections.size() + 2;
  file.resize(table + count * 64);
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const std::size_t at = table + (i + 1) * 64;
    put<std::uint32_t>(file, at + 0, name_offsets[i]);
    put<std::uint32_t>(file, at + 4, sections[i].type);
    put<std::uint64_t>(file, at + 24, placed[i].first);
    put<std::uint64_t>(file, at + 32, placed[i].second);
  }
  const std::size_t last = table + (count - 1) * 64;
  put<std::uint32_t>(file, last + 0, shstrtab_name);
  put<std::uint32_t>(file, last + 4, 3);  // SHT_STRTAB
  put<std::uint64_t>(file, last + 24, names_offset);
  put<std::uint64_t>(file, last + 32, names.size());
  put<std::uint64_t>(file, 40, table);
  put<std::uint16_t>(file, 60, static_cast<std::uint16_t>(count));
  put<std::uint16_t>(file, 62, static_cast<std::uint16_t>(count - 1));
  return file;
}

// Reads `file` as warm reads a file; counts the bytes asked for, to show that nothing is read whole.
struct FileReader {
  const Bytes& file;
  std::size_t asked = 0;
  fb::ReadAt reader() {
    return [this](std::uint64_t offset, std::span<std::byte> into) -> jitcache::common::Result<void> {
      REQUIRE(offset <= file.size());  // the parser checks bounds before it reads
      REQUIRE(into.size() <= file.size() - offset);
      asked += into.size();
      std::memcpy(into.data(), file.data() + offset, into.size());
      return {};
    };
  }
};

std::uint64_t section_table(const Bytes& file) {
  std::uint64_t offset = 0;
  std::memcpy(&offset, file.data() + 40, 8);
  return offset;
}

}  // namespace

TEST_CASE("host elf: both fat binary sections of a shared library are found, in table order, with their bytes") {
  Bytes fatbin = container(40, 0x11);
  align(fatbin, 8);
  append(fatbin, container(24, 0x22));
  const Bytes relfatbin = container(8, 0x33);
  const Bytes file = make_elf({{".text", Bytes(100, std::byte{0x90})},
                               {".nv_fatbin", fatbin},
                               {".nvFatBinSegment", Bytes(24)},
                               {"__nv_relfatbin", relfatbin},
                               {".bss", Bytes(), 8}});
  FileReader reader{file};
  auto elf = fb::read_host_elf(file.size(), reader.reader());
  REQUIRE(elf);
  CHECK(elf->machine == 62);
  REQUIRE(elf->fatbin_sections.size() == 2);
  CHECK(elf->fatbin_sections[0].name == ".nv_fatbin");
  CHECK(elf->fatbin_sections[0].range.size == fatbin.size());
  CHECK(std::memcmp(file.data() + elf->fatbin_sections[0].range.offset, fatbin.data(), fatbin.size()) == 0);
  CHECK(elf->fatbin_sections[1].name == "__nv_relfatbin");
  CHECK(elf->fatbin_sections[1].range.size == relfatbin.size());
  // The header, the section table and the names: the sections themselves are left for later.
  CHECK(reader.asked < file.size() - 100);

  auto containers = fb::section_containers(elf->fatbin_sections[0], reader.reader());
  REQUIRE(containers);
  REQUIRE(containers->size() == 2);
  CHECK((*containers)[0].offset == elf->fatbin_sections[0].range.offset);
  CHECK((*containers)[0].size == 56);
  CHECK((*containers)[1].offset == elf->fatbin_sections[0].range.offset + 56);
  CHECK((*containers)[1].size == 40);
}

TEST_CASE("host elf: zero padding between and after containers is skipped, an empty container is kept") {
  Bytes section = container(20, 0x44);  // 36 bytes, padded to 40
  align(section, 8);
  section.resize(section.size() + 5000, std::byte{0});  // more than one padding block
  append(section, container(0, 0));
  section.resize(section.size() + 3, std::byte{0});
  const Bytes file = make_elf({{".nv_fatbin", section}});
  FileReader reader{file};
  auto elf = fb::read_host_elf(file.size(), reader.reader());
  REQUIRE(elf);
  REQUIRE(elf->fatbin_sections.size() == 1);
  auto containers = fb::section_containers(elf->fatbin_sections[0], reader.reader());
  REQUIRE(containers);
  REQUIRE(containers->size() == 2);
  CHECK((*containers)[0].size == 36);
  CHECK((*containers)[1].offset == elf->fatbin_sections[0].range.offset + 5040);
  CHECK((*containers)[1].size == 16);
}

TEST_CASE("host elf: a program without device code, a cubin and a 32-bit ELF are told apart") {
  const Bytes plain = make_elf({{".text", Bytes(64, std::byte{0xC3})}});
  FileReader reader{plain};
  auto elf = fb::read_host_elf(plain.size(), reader.reader());
  REQUIRE(elf);
  CHECK(elf->fatbin_sections.empty());
  CHECK(fb::elf_machine(plain) == 62);

  const Bytes cubin = make_elf({{".text.kernel", Bytes(64)}}, fb::k_elf_machine_cuda);
  CHECK(fb::elf_machine(cubin) == fb::k_elf_machine_cuda);

  Bytes elf32 = plain;
  elf32[4] = std::byte{1};
  CHECK(fb::elf_machine(elf32) == 62);
  FileReader reader32{elf32};
  auto refused = fb::read_host_elf(elf32.size(), reader32.reader());
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::unsupported);

  const Bytes text(100, std::byte{'a'});
  CHECK_FALSE(fb::has_elf_magic(text));
  CHECK(fb::elf_machine(text) == 0);
  FileReader text_reader{text};
  auto not_elf = fb::read_host_elf(text.size(), text_reader.reader());
  REQUIRE_FALSE(not_elf);
  CHECK(not_elf.error().code == ErrorCode::invalid_argument);
  CHECK(fb::elf_machine(std::span(plain).first(10)) == 0);  // too short to say
}

TEST_CASE(
    "host elf: a table, a name table or a section outside the file is corrupt, named, and nothing is read past the end") {
  const Bytes good = make_elf({{".nv_fatbin", container(8, 1)}});
  const std::uint64_t table = section_table(good);

  Bytes truncated(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(table + 64));
  FileReader r1{truncated};
  auto cut = fb::read_host_elf(truncated.size(), r1.reader());
  REQUIRE_FALSE(cut);
  CHECK(cut.error().code == ErrorCode::corrupt);
  CHECK_THAT(cut.error().message, Catch::Contains("section table"));

  Bytes bad_names = good;
  put<std::uint16_t>(bad_names, 62, 200);
  FileReader r2{bad_names};
  auto names = fb::read_host_elf(bad_names.size(), r2.reader());
  REQUIRE_FALSE(names);
  CHECK_THAT(names.error().message, Catch::Contains("name table index 200"));

  Bytes far_section = good;
  put<std::uint64_t>(far_section, table + 64 + 24, std::uint64_t{1} << 40);
  FileReader r3{far_section};
  auto far = fb::read_host_elf(far_section.size(), r3.reader());
  REQUIRE_FALSE(far);
  CHECK(far.error().code == ErrorCode::corrupt);
  CHECK_THAT(far.error().message, Catch::Contains("ELF section .nv_fatbin"));

  Bytes huge_size = good;
  put<std::uint64_t>(huge_size, table + 64 + 32, ~std::uint64_t{0});  // offset + size overflows
  FileReader r4{huge_size};
  CHECK_FALSE(fb::read_host_elf(huge_size.size(), r4.reader()));

  Bytes small_entries = good;
  put<std::uint16_t>(small_entries, 58, 40);
  FileReader r5{small_entries};
  auto entries = fb::read_host_elf(small_entries.size(), r5.reader());
  REQUIRE_FALSE(entries);
  CHECK_THAT(entries.error().message, Catch::Contains("section header size 40"));
}

TEST_CASE("host elf: junk between containers and a container running past its section are corrupt, with the offset") {
  Bytes junk = container(8, 1);
  append(junk, Bytes{std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0},
                     std::byte{0}, std::byte{7}});
  junk.resize(junk.size() + 16);
  const Bytes file = make_elf({{".nv_fatbin", junk}});
  FileReader reader{file};
  auto elf = fb::read_host_elf(file.size(), reader.reader());
  REQUIRE(elf);
  auto split = fb::section_containers(elf->fatbin_sections[0], reader.reader());
  REQUIRE_FALSE(split);
  CHECK(split.error().code == ErrorCode::corrupt);
  CHECK_THAT(split.error().message, Catch::Contains(".nv_fatbin at offset 0x20: neither a fat binary container"));

  Bytes overrun = container(8, 1);
  put<std::uint64_t>(overrun, 8, 1000);
  const Bytes long_file = make_elf({{"__nv_relfatbin", overrun}});
  FileReader long_reader{long_file};
  auto long_elf = fb::read_host_elf(long_file.size(), long_reader.reader());
  REQUIRE(long_elf);
  auto past = fb::section_containers(long_elf->fatbin_sections[0], long_reader.reader());
  REQUIRE_FALSE(past);
  CHECK_THAT(past.error().message, Catch::Contains("runs past the section's end"));
}
