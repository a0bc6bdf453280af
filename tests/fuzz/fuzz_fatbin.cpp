// libFuzzer target: the image libjitcache is handed by cuModuleLoadData, walked as the load path
// walks it (client/src/key/image_source.cpp): classify it, read the fat binary, pick the image for a
// device, read the chosen PTX's header and embedded ptxas options. Input: the image's bytes, which
// start with a fat binary container, a wrapper, an ELF header or PTX text.
//
// Rationale: a wrapper holds a pointer and a pointer-sized image has no size; the reader trusts both
// as the driver does (fatbin_reader.hpp, image_kind.hpp), so this target may only hand them memory it
// owns. A wrapper's data pointer is set to the bytes that follow the wrapper in the input (which the
// seeds put there), and an image reached without a size is walked only when the size its own header
// claims lies inside the input. Everything read with a size (read_fatbin on a span, elf_extent with a
// limit) gets the input as it is.
//
// Properties checked (abort() on violation, so the fuzzer reports the input):
//   - nothing reads out of bounds, leaks or hits UB (ASan, UBSan, LeakSanitizer);
//   - a refusal has a message, and input with no fat binary magic is invalid_argument;
//   - an entry's bytes lie inside the input, or inside its own decompressed buffer within the cap;
//   - an ELF extent found with a limit lies inside it and equals the one found without a limit;
//   - a selected image is one the device can use, and a cubin is chosen whenever one can run.
#include <client/src/fatbin/elf_extent.hpp>
#include <client/src/fatbin/fatbin_format.hpp>
#include <client/src/fatbin/fatbin_reader.hpp>
#include <client/src/fatbin/image_kind.hpp>
#include <client/src/fatbin/little_endian.hpp>
#include <client/src/fatbin/select_image.hpp>
#include <client/src/key/embedded_ptxas_options.hpp>
#include <client/src/key/ptx_header.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

namespace fb = jitcache::client::fatbin;
namespace key = jitcache::client::key;
using jitcache::common::ErrorCode;

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_fatbin: property violated: %s\n", what);
  std::abort();
}

// Rationale: the real cap is 1 GiB per entry; a 28-byte zstd frame can claim that much, and zeroing
// it on every such input would make the run crawl (and trip libFuzzer's memory limit) without
// reaching any other code. The checks around the cap do not depend on its value.
constexpr std::uint64_t k_fuzz_max_decompressed = std::uint64_t{1} << 20;

// Devices spanning the selection rules: earlier and later minors, arch-specific and family targets.
constexpr std::array<fb::DeviceTarget, 5> k_devices{{
    {7, 5, false, false},
    {8, 6, false, false},
    {9, 0, true, false},
    {10, 0, true, true},
    {12, 1, true, true},
}};
constexpr fb::PtxIsa k_driver_isa{9, 0};

// The input copied into 8-byte-aligned memory, as a loaded image is; a wrapper's pointer is aimed at
// the bytes that follow it.
struct Image {
  std::vector<std::uint64_t> storage;
  std::span<std::byte> bytes;

  explicit Image(std::span<const std::uint8_t> input) : storage(input.size() / 8 + 2, 0) {
    bytes = std::span<std::byte>(reinterpret_cast<std::byte*>(storage.data()), input.size());
    if (!input.empty()) std::memcpy(bytes.data(), input.data(), input.size());
  }
  // The input followed by a NUL (the storage has at least 8 zero bytes past the input), for PTX.
  const void* c_string() const { return storage.data(); }
};

std::uint32_t magic_of(std::span<const std::byte> bytes) {
  return bytes.size() >= 4 ? fb::load_le<std::uint32_t>(bytes, 0) : 0;
}

bool inside(std::span<const std::byte> inner, std::span<const std::byte> outer) {
  return inner.data() >= outer.data() && inner.data() + inner.size() <= outer.data() + outer.size();
}

bool has_elf_magic(std::span<const std::byte> bytes) {
  return bytes.size() >= 4 && bytes[0] == std::byte{0x7F} && bytes[1] == std::byte{'E'} && bytes[2] == std::byte{'L'} &&
         bytes[3] == std::byte{'F'};
}

void check_refusal(const jitcache::common::Error& error) {
  if (error.message.empty()) fail("a refusal has no message");
}

// A cubin with a known size: the check a cached image gets before the driver sees it.
void walk_elf(std::span<const std::byte> elf) {
  if (!has_elf_magic(elf)) return;
  auto bounded = fb::elf_extent(elf.data(), elf.size());
  if (!bounded) {
    check_refusal(bounded.error());
    return;
  }
  if (*bounded > elf.size()) fail("an ELF extent found with a limit lies past the limit");
  auto unbounded = fb::elf_extent(elf.data(), std::nullopt);
  if (!unbounded || *unbounded != *bounded) fail("an ELF extent differs with and without the limit");
}

void walk_ptx(std::string_view text) {
  const key::PtxHeader header = key::read_ptx_header(text);
  if (header.target && header.target->sm < 10) fail("a PTX .target below sm_10 was accepted");
}

bool newer_than_driver(const fb::Entry& ptx) {
  return ptx.version_major > k_driver_isa.major ||
         (ptx.version_major == k_driver_isa.major && ptx.version_minor > k_driver_isa.minor);
}

void check_selection(const fb::FatBinary& fat, const fb::DeviceTarget& device) {
  auto selected = fb::select_image(fat.entries, device, k_driver_isa);
  bool cubin_runs = false;
  bool ptx_usable = false;
  for (const fb::Entry& entry : fat.entries) {
    cubin_runs = cubin_runs || (entry.kind == fb::EntryKind::cubin && fb::cubin_runs_on(entry.arch, device));
    ptx_usable = ptx_usable ||
                 (entry.kind == fb::EntryKind::ptx && fb::ptx_targets(entry.arch, device) && !newer_than_driver(entry));
  }
  if (!selected) {
    if (selected.error().code != ErrorCode::unsupported)
      fail("select_image refused with a code other than unsupported");
    if (cubin_runs || ptx_usable) fail("select_image found no image although the device can use one");
    check_refusal(selected.error());
    return;
  }
  if (selected->entry_index >= fat.entries.size()) fail("select_image chose an entry that does not exist");
  const fb::Entry& entry = fat.entries[selected->entry_index];
  if (selected->action == fb::Action::load_cubin) {
    if (entry.kind != fb::EntryKind::cubin || !fb::cubin_runs_on(entry.arch, device)) {
      fail("select_image chose a cubin the device cannot run");
    }
    return;
  }
  if (cubin_runs) fail("select_image chose PTX although a cubin runs on the device");
  if (entry.kind != fb::EntryKind::ptx || !fb::ptx_targets(entry.arch, device)) {
    fail("select_image chose PTX that does not target the device");
  }
  if (newer_than_driver(entry)) fail("select_image chose PTX newer than the driver can JIT");
  // The load path's next steps for the chosen PTX.
  if (auto options = key::parse_embedded_ptxas_options(entry.ptxas_options); !options) {
    if (options.error().code != ErrorCode::unsupported) fail("embedded ptxas options refused other than unsupported");
    check_refusal(options.error());
  }
  walk_ptx(entry.ptx_text());
}

void walk_fatbin(std::span<const std::byte> bytes, std::span<const std::byte> input) {
  auto fat = fb::read_fatbin(bytes, fb::ReadLimits{k_fuzz_max_decompressed});
  if (!fat) {
    check_refusal(fat.error());
    const std::uint32_t magic = magic_of(bytes);
    if (magic != fb::k_container_magic && magic != fb::k_wrapper_magic &&
        fat.error().code != ErrorCode::invalid_argument) {
      fail("input with no fat binary magic is refused other than invalid_argument");
    }
    return;
  }
  for (const fb::Entry& entry : fat->entries) {
    if (entry.compression == fb::Compression::none) {
      if (entry.owned || !inside(entry.bytes, input))
        fail("an uncompressed entry's bytes are not a view into the input");
    } else {
      if (!entry.owned || entry.bytes.data() != entry.owned->data() || entry.bytes.size() != entry.owned->size()) {
        fail("a decompressed entry's bytes are not its own buffer");
      }
      if (entry.bytes.empty() || entry.bytes.size() > k_fuzz_max_decompressed)
        fail("a decompressed entry breaks the cap");
    }
    if (fb::describe(entry).empty()) fail("an entry has no description");
    if (entry.ptx_text().size() > entry.bytes.size()) fail("an entry's PTX text is longer than its bytes");
    if (entry.kind == fb::EntryKind::cubin) walk_elf(entry.bytes);
  }
  for (const fb::DeviceTarget& device : k_devices) check_selection(*fat, device);
}

// Aims the wrapper's pointer at the aligned bytes after the 24-byte wrapper, keeping the input's null
// pointer or misalignment so those refusals are reached too. Returns whether the reader may follow the
// wrapper: the container's header is in the input and the size it claims lies inside the input.
bool aim_wrapper(Image& image) {
  std::span<std::byte> bytes = image.bytes;
  if (bytes.size() < fb::k_wrapper_size + fb::k_container_header_min) return false;
  const auto given = fb::load_le<std::uintptr_t>(bytes, fb::k_wrapper_data_offset);
  if (given != 0) {
    const auto aimed = reinterpret_cast<std::uintptr_t>(bytes.data() + fb::k_wrapper_size) + given % 8;
    std::memcpy(bytes.data() + fb::k_wrapper_data_offset, &aimed, sizeof aimed);
  }
  auto container = fb::container_behind_wrapper(bytes);
  if (!container) {
    check_refusal(container.error());
    return false;
  }
  return inside(*container, bytes);
}

// cuModuleLoadData's view: a pointer with no size.
void walk_pointer(const Image& image, bool wrapper_followable) {
  const std::span<const std::byte> bytes = image.bytes;
  const std::uint32_t magic = magic_of(bytes);
  if (has_elf_magic(bytes)) {
    // Only an ELF whose own headers stay inside the input may be sized from them.
    if (!fb::elf_extent(bytes.data(), bytes.size())) return;
  } else if (magic == fb::k_wrapper_magic) {
    if (!wrapper_followable) return;
  } else if (magic == fb::k_container_magic) {
    if (bytes.size() < fb::k_container_header_min) return;
  }
  auto view = fb::classify_image(image.c_string());
  if (!view) {
    check_refusal(view.error());
    return;
  }
  if (fb::image_kind_name(view->kind).empty()) fail("an image kind has no name");
  switch (view->kind) {
    case fb::ImageKind::cubin:
      if (view->bytes.data() != bytes.data() || !inside(view->bytes, bytes)) fail("a cubin's extent leaves the input");
      return;
    case fb::ImageKind::ptx:
      if (view->bytes.empty() || !inside(view->bytes, bytes)) fail("PTX text leaves the input or is empty");
      walk_ptx(std::string_view(reinterpret_cast<const char*>(view->bytes.data()), view->bytes.size()));
      return;
    case fb::ImageKind::fatbin:
      // The container's size comes from its header; read it only when that lies inside the input.
      if (inside(view->bytes, bytes)) walk_fatbin(view->bytes, bytes);
      return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Image image(std::span<const std::uint8_t>(data, size));
  bool wrapper_followable = false;
  if (magic_of(image.bytes) != fb::k_wrapper_magic || image.bytes.size() < fb::k_wrapper_size) {
    walk_fatbin(image.bytes, image.bytes);  // a truncated wrapper is refused before its pointer is read
  } else if (aim_wrapper(image)) {
    wrapper_followable = true;
    walk_fatbin(image.bytes, image.bytes);
  }
  walk_elf(image.bytes);
  walk_pointer(image, wrapper_followable);
  return 0;
}
