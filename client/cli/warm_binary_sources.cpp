// The host binary half of warm_sources.hpp: the fat binary sections of an ELF executable or shared
// library, read a container at a time through pread(2), so the memory used is that of the largest
// container, not of the file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <client/cli/warm_sources.hpp>
#include <client/src/fatbin/fatbin_format.hpp>
#include <client/src/fatbin/host_elf.hpp>
#include <client/src/key/image_source.hpp>
#include <common/unique_fd.hpp>

namespace jitcache::client::cli {

namespace {

// Rationale: the largest containers in the wild (a whole math library's) are a few hundred MiB; one
// claimed larger than this is not read into memory.
constexpr std::uint64_t k_max_container_bytes = std::uint64_t{2} << 30;

fatbin::ReadAt reader(int fd, const std::string& path) {
  return [fd, path](std::uint64_t offset, std::span<std::byte> into) -> common::Result<void> {
    std::size_t done = 0;
    while (done < into.size()) {
      const ssize_t n = ::pread(fd, into.data() + done, into.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return common::make_error(common::ErrorCode::io, "cannot read " + path + ": " + std::strerror(errno));
      if (n == 0) {
        return common::make_error(common::ErrorCode::corrupt,
                                  "cannot read " + path + ": it ends before offset " + std::to_string(offset + done));
      }
      done += static_cast<std::size_t>(n);
    }
    return {};
  };
}

WarmSource failure(std::string label, std::string error) {
  WarmSource source;
  source.label = std::move(label);
  source.error = std::move(error);
  return source;
}

// The section whose containers hold relocatable device code (docs/fatbin.md "In executables and
// shared libraries").
constexpr std::string_view k_relocatable_section = "__nv_relfatbin";

// One container, walked as a load of it would be.
void visit_container(const std::string& label, bool relocatable, std::vector<std::byte>& bytes,
                     const WarmTarget& target, WarmTally& tally, const std::function<void(WarmSource&&)>& visit) {
  ++tally.fat_binaries;
  const key::ImageSource found = key::find_source(
      bytes.data(), [&] { return std::optional(target.device); }, target.max_ptx);
  // Its PTX carries ptxas's --compile-only: it is compiled by the device link at start-up, which no
  // module load's key describes.
  if (relocatable && (!found.none || found.none == key::NoSource::embedded_options)) {
    ++tally.relocatable_ptx;
    return;
  }
  WarmSource source;
  source.label = label + (found.entry.empty() ? "]" : ": " + found.entry + "]");
  if (!found.none) {
    source.ptx = std::string(found.ptx.text());
    source.embedded = found.ptx.embedded;
    visit(std::move(source));
    return;
  }
  switch (*found.none) {
    case key::NoSource::cubin_for_device: ++tally.cubin_for_device; return;
    case key::NoSource::no_image_for_device: ++tally.no_image_for_device; return;
    case key::NoSource::embedded_options: source.error = "uncacheable: " + found.detail; break;
    default: source.error = "fat binary not understood: " + found.detail; break;
  }
  visit(std::move(source));
}

}  // namespace

void visit_host_binary_sources(const WarmFile& file, const WarmTarget& target, WarmTally& tally,
                               const std::function<void(WarmSource&&)>& visit) {
  const common::UniqueFd fd(::open(file.path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0) {
    visit(failure(file.path, "cannot read " + file.path + ": " + std::strerror(errno)));
    return;
  }
  if (!S_ISREG(st.st_mode)) {
    visit(failure(file.path, "cannot read " + file.path + ": not a regular file"));
    return;
  }
  const fatbin::ReadAt read = reader(fd.get(), file.path);
  auto elf = fatbin::read_host_elf(static_cast<std::uint64_t>(st.st_size), read);
  if (!elf) {
    // A directory's damaged or foreign ELF files are not what the user asked to warm; a named one is.
    if (file.named) visit(failure(file.path, "ELF file not understood: " + elf.error().message));
    return;
  }
  ++tally.host_binaries;
  if (elf->fatbin_sections.empty()) {
    if (file.named) {
      WarmSource source = failure(file.path, "no CUDA fat binary (.nv_fatbin, __nv_relfatbin): nothing to compile");
      source.nothing_to_do = true;
      visit(std::move(source));
    }
    return;
  }
  for (const fatbin::FatbinSection& section : elf->fatbin_sections) {
    auto containers = fatbin::section_containers(section, read);
    if (!containers) {
      visit(failure(file.path + " [" + section.name + "]", "fat binary not understood: " + containers.error().message));
      continue;
    }
    std::size_t number = 0;
    for (const fatbin::FileRange& range : *containers) {
      ++number;
      if (range.size <= fatbin::k_container_header_min) continue;  // an empty container: no entries
      const std::string label = file.path + " [" + section.name + " #" + std::to_string(number);
      if (range.size > k_max_container_bytes) {
        visit(failure(label + "]", "a container of " + std::to_string(range.size) + " bytes, more than warm reads"));
        continue;
      }
      std::vector<std::byte> bytes(static_cast<std::size_t>(range.size));
      if (auto got = read(range.offset, bytes); !got) {
        visit(failure(label + "]", got.error().message));
        return;  // the file changed or cannot be read: the rest of it is no better
      }
      visit_container(label, section.name == k_relocatable_section, bytes, target, tally, visit);
    }
  }
}

}  // namespace jitcache::client::cli
