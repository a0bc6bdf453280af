// libFuzzer target: a host executable or shared library as `jitcache warm` reads it
// (client/src/fatbin/host_elf.hpp): the ELF header and section table, the fat binary sections, and
// the containers inside each. Input: the file's bytes (the seeds are small objects made with
// objcopy --add-section, with and without .nv_fatbin and __nv_relfatbin).
//
// Properties checked (abort() on violation, so the fuzzer reports the input):
//   - nothing reads out of bounds, leaks or hits UB (ASan, UBSan, LeakSanitizer); every read goes
//     through the callback, which refuses a range outside the input;
//   - a refusal has a message;
//   - every fat binary section lies inside the file, and every container inside its section.
#include <client/src/fatbin/host_elf.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>

namespace fb = jitcache::client::fatbin;
using jitcache::common::ErrorCode;
using jitcache::common::make_error;

namespace {

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_host_elf: property violated: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fb::ReadAt read = [&](std::uint64_t offset, std::span<std::byte> into) -> jitcache::common::Result<void> {
    if (offset > size || into.size() > size - offset) return make_error(ErrorCode::corrupt, "read past the end");
    if (!into.empty()) std::memcpy(into.data(), data + offset, into.size());
    return {};
  };
  auto elf = fb::read_host_elf(size, read);
  if (!elf) {
    require(!elf.error().message.empty(), "a refusal has a message");
    return 0;
  }
  for (const fb::FatbinSection& section : elf->fatbin_sections) {
    require(section.range.offset <= size && section.range.size <= size - section.range.offset,
            "a fat binary section lies inside the file");
    auto containers = fb::section_containers(section, read);
    if (!containers) {
      require(!containers.error().message.empty(), "a refusal has a message");
      continue;
    }
    for (const fb::FileRange& container : *containers) {
      require(container.offset >= section.range.offset &&
                  container.offset + container.size <= section.range.offset + section.range.size,
              "a container lies inside its section");
    }
  }
  return 0;
}
