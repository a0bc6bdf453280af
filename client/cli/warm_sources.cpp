#include <client/cli/warm_sources.hpp>

#include <optional>

#include <client/cli/file_io.hpp>
#include <client/src/fatbin/image_kind.hpp>
#include <client/src/key/image_source.hpp>

namespace jitcache::client::cli {

namespace {

// A file read whole: PTX text, or a fat binary (containers, or an nvcc wrapper's container).
void visit_image_file(const WarmFile& file, const WarmTarget& target, WarmTally& tally,
                      const std::function<void(WarmSource&&)>& visit) {
  WarmSource source;
  source.label = file.path;
  auto bytes = read_whole_file(file.path);
  if (!bytes) {
    source.error = bytes.error().message;
    visit(std::move(source));
    return;
  }
  // The image is read like the driver reads it, up to a NUL for PTX: give it one past the file's end.
  bytes->push_back(0);
  const key::ImageSource found = key::find_source(
      bytes->data(), [&] { return std::optional(target.device); }, target.max_ptx);
  if (!found.entry.empty()) source.label = file.path + " [" + found.entry + "]";
  if (auto kind = fatbin::classify_image(bytes->data()); kind && kind->kind == fatbin::ImageKind::fatbin) {
    ++tally.fat_binaries;
  }
  if (found.none) {
    switch (*found.none) {
      case key::NoSource::unrecognised: source.error = "neither PTX nor a fat binary (" + found.detail + ")"; break;
      case key::NoSource::cubin:
        source.error = "a cubin: nothing to compile";
        source.nothing_to_do = true;
        break;
      case key::NoSource::fatbin_unreadable: source.error = "fat binary not understood: " + found.detail; break;
      case key::NoSource::cubin_for_device:
        source.error = "holds a cubin the device runs: nothing to compile";
        source.nothing_to_do = true;
        ++tally.cubin_for_device;
        break;
      case key::NoSource::embedded_options: source.error = "uncacheable: " + found.detail; break;
      case key::NoSource::no_device:
      case key::NoSource::no_image_for_device: source.error = found.detail; break;
    }
    visit(std::move(source));
    return;
  }
  source.ptx = std::string(found.ptx.text());
  source.embedded = found.ptx.embedded;
  visit(std::move(source));
}

}  // namespace

void visit_warm_sources(const WarmFile& file, const WarmTarget& target, WarmTally& tally,
                        const std::function<void(WarmSource&&)>& visit) {
  if (!file.error.empty()) {
    WarmSource source;
    source.label = file.path;
    source.error = file.error;
    visit(std::move(source));
    return;
  }
  if (file.kind == WarmFileKind::host_binary) {
    visit_host_binary_sources(file, target, tally, visit);
  } else {
    visit_image_file(file, target, tally, visit);
  }
}

}  // namespace jitcache::client::cli
