#include <client/cli/warm_sources.hpp>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <client/cli/file_io.hpp>
#include <client/src/key/image_source.hpp>

namespace jitcache::client::cli {

namespace fs = std::filesystem;

namespace {

bool warmable_name(const fs::path& path) {
  const std::string extension = path.extension().string();
  return extension == ".ptx" || extension == ".fatbin";
}

void add_file(const std::string& path, const driver::ComputeCapability& device, const fatbin::PtxIsa& max_ptx,
              std::vector<WarmSource>& out) {
  WarmSource source;
  source.label = path;
  auto bytes = read_whole_file(path);
  if (!bytes) {
    source.error = bytes.error().message;
    out.push_back(std::move(source));
    return;
  }
  // The image is read like the driver reads it, up to a NUL for PTX: give it one past the file's end.
  bytes->push_back(0);
  const key::ImageSource found = key::find_source(
      bytes->data(), [&] { return std::optional(device); }, max_ptx);
  if (!found.entry.empty()) source.label = path + " [" + found.entry + "]";
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
        break;
      case key::NoSource::embedded_options: source.error = "uncacheable: " + found.detail; break;
      case key::NoSource::no_device:
      case key::NoSource::no_image_for_device: source.error = found.detail; break;
    }
    out.push_back(std::move(source));
    return;
  }
  source.ptx = std::string(found.ptx.text());
  source.embedded = found.ptx.embedded;
  out.push_back(std::move(source));
}

}  // namespace

std::vector<WarmSource> collect_warm_sources(const std::vector<std::string>& paths,
                                             const driver::ComputeCapability& device, const fatbin::PtxIsa& max_ptx) {
  std::vector<WarmSource> out;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      add_file(path, device, max_ptx, out);
      continue;
    }
    std::vector<std::string> files;
    for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file(ec) && warmable_name(it->path())) files.push_back(it->path().string());
    }
    if (ec) out.push_back(WarmSource{path, {}, {}, "cannot list the directory: " + ec.message(), false});
    // Sorted, so the order of the lines and of the progress does not depend on the file system.
    std::sort(files.begin(), files.end());
    for (const std::string& file : files) add_file(file, device, max_ptx, out);
  }
  return out;
}

}  // namespace jitcache::client::cli
