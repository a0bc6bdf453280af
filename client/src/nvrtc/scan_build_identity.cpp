#include <client/src/nvrtc/scan_build_identity.hpp>

#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>

#include <proto/digest.hpp>

namespace jitcache::client::nvrtc {

namespace {

struct Search {
  std::uintptr_t address = 0;
  std::string identity;
};

// The build ID among the notes of one PT_NOTE segment, or empty.
std::string build_id_in(const unsigned char* notes, std::size_t size) {
  std::size_t at = 0;
  const auto aligned = [](std::size_t n) { return (n + 3) & ~std::size_t{3}; };
  while (at + sizeof(ElfW(Nhdr)) <= size) {
    ElfW(Nhdr) header;
    std::memcpy(&header, notes + at, sizeof(header));
    const std::size_t name_at = at + sizeof(header);
    const std::size_t descriptor_at = name_at + aligned(header.n_namesz);
    const std::size_t next = descriptor_at + aligned(header.n_descsz);
    if (next > size || next <= at) return {};
    if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 && std::memcmp(notes + name_at, "GNU", 4) == 0 &&
        header.n_descsz > 0) {
      return proto::to_hex(proto::Bytes(notes + descriptor_at, header.n_descsz));
    }
    at = next;
  }
  return {};
}

int find_object(dl_phdr_info* info, std::size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  bool holds = false;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum && !holds; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    const std::uintptr_t start = info->dlpi_addr + segment.p_vaddr;
    holds = segment.p_type == PT_LOAD && search->address >= start && search->address < start + segment.p_memsz;
  }
  if (!holds) return 0;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum && search->identity.empty(); ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_NOTE) continue;
    search->identity =
        build_id_in(reinterpret_cast<const unsigned char*>(info->dlpi_addr + segment.p_vaddr), segment.p_memsz);
  }
  return 1;
}

}  // namespace

const std::string& scan_build_identity() {
  static const std::string* identity = [] {
    Search search;
    search.address = reinterpret_cast<std::uintptr_t>(&find_object);
    ::dl_iterate_phdr(find_object, &search);
    return new std::string(std::move(search.identity));  // never destroyed: used by threads at exit
  }();
  return *identity;
}

}  // namespace jitcache::client::nvrtc
