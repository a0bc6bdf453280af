#include <client/cli/warm_sources.hpp>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <client/cli/file_io.hpp>
#include <client/src/fatbin/fatbin_reader.hpp>
#include <client/src/fatbin/image_kind.hpp>

namespace jitcache::client::cli {

namespace fs = std::filesystem;

namespace {

bool warmable_name(const fs::path& path) {
  const std::string extension = path.extension().string();
  return extension == ".ptx" || extension == ".fatbin";
}

void add_file(const std::string& path, const fatbin::DeviceTarget& device, const fatbin::PtxIsa& max_ptx,
              std::vector<WarmSource>& out) {
  WarmSource source;
  source.label = path;
  auto bytes = read_whole_file(path);
  if (!bytes) {
    source.error = bytes.error().message;
    out.push_back(std::move(source));
    return;
  }
  // classify_image reads like the driver, up to a NUL for PTX: give it one past the file's end.
  bytes->push_back(0);
  auto view = fatbin::classify_image(bytes->data());
  if (!view || view->kind == fatbin::ImageKind::cubin) {
    source.error = view ? "a cubin: nothing to compile" : "neither PTX nor a fat binary (" + view.error().message + ")";
    source.nothing_to_do = view.ok();
    out.push_back(std::move(source));
    return;
  }
  if (view->kind == fatbin::ImageKind::ptx) {
    source.ptx.assign(reinterpret_cast<const char*>(view->bytes.data()), view->bytes.size());
    out.push_back(std::move(source));
    return;
  }
  auto parsed = fatbin::read_fatbin(view->bytes);
  if (!parsed) {
    source.error = "fat binary not understood: " + parsed.error().message;
    out.push_back(std::move(source));
    return;
  }
  auto selected = fatbin::select_image(parsed->entries, device, max_ptx);
  if (!selected) {
    source.error = selected.error().message;
    out.push_back(std::move(source));
    return;
  }
  const fatbin::Entry& entry = parsed->entries[selected->entry_index];
  source.label = path + " [" + fatbin::describe(entry) + "]";
  if (selected->action == fatbin::Action::load_cubin) {
    source.error = "holds a cubin the device runs: nothing to compile";
    source.nothing_to_do = true;
    out.push_back(std::move(source));
    return;
  }
  auto embedded = loader::parse_embedded_ptxas_options(entry.ptxas_options);
  if (!embedded) {
    source.error = "uncacheable: " + embedded.error().message;
    out.push_back(std::move(source));
    return;
  }
  source.embedded = std::move(*embedded);
  source.ptx = std::string(entry.ptx_text());
  out.push_back(std::move(source));
}

}  // namespace

std::vector<WarmSource> collect_warm_sources(const std::vector<std::string>& paths, const fatbin::DeviceTarget& device,
                                             const fatbin::PtxIsa& max_ptx) {
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
