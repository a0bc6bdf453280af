#include <client/src/key/image_source.hpp>

#include <client/src/fatbin/fatbin_reader.hpp>
#include <client/src/fatbin/image_kind.hpp>

namespace jitcache::client::key {

namespace {

ImageSource nothing(NoSource why, std::string detail = {}) {
  ImageSource source;
  source.none = why;
  source.detail = std::move(detail);
  return source;
}

}  // namespace

fatbin::DeviceTarget device_target(const driver::ComputeCapability& cc) {
  fatbin::DeviceTarget target;
  target.major = cc.major;
  target.minor = cc.minor;
  target.arch_specific = cc.sm() >= 90;
  target.family = cc.sm() >= 100;
  return target;
}

ImageSource find_source(const void* image, const DeviceQuery& device, const fatbin::PtxIsa& max_ptx) {
  auto view = fatbin::classify_image(image);
  if (!view) return nothing(NoSource::unrecognised, view.error().message);
  if (view->kind == fatbin::ImageKind::cubin) return nothing(NoSource::cubin);
  if (view->kind == fatbin::ImageKind::ptx) {
    ImageSource source;
    source.ptx.borrowed = std::string_view(reinterpret_cast<const char*>(view->bytes.data()), view->bytes.size());
    return source;
  }

  fatbin::ReadLimits limits;
  limits.defer_decompression = true;  // only the entry a load would JIT is decompressed
  auto parsed = fatbin::read_fatbin(view->bytes, limits);
  if (!parsed) return nothing(NoSource::fatbin_unreadable, parsed.error().message);
  const std::optional<driver::ComputeCapability> cc = device();
  if (!cc) return nothing(NoSource::no_device);
  auto selected = fatbin::select_image(parsed->entries, device_target(*cc), max_ptx);
  if (!selected) {
    ImageSource source = nothing(NoSource::no_image_for_device, selected.error().message);
    source.device = cc;
    return source;
  }
  fatbin::Entry& entry = parsed->entries[selected->entry_index];
  ImageSource source;
  source.device = cc;
  source.entry = fatbin::describe(entry);
  if (selected->action == fatbin::Action::load_cubin) {
    source.none = NoSource::cubin_for_device;
    return source;
  }
  if (auto decompressed = fatbin::decompress_entry(entry, limits); !decompressed) {
    return nothing(NoSource::fatbin_unreadable, decompressed.error().message);
  }
  auto embedded = parse_embedded_ptxas_options(entry.ptxas_options);
  if (!embedded) {
    source.none = NoSource::embedded_options;
    source.detail = embedded.error().message;
    return source;
  }
  source.ptx.embedded = std::move(*embedded);
  // The entry's PTX lives in the fat binary (or the walker's decompressed copy) and need not end in
  // a NUL inside it; cuLinkAddData needs one.
  source.ptx.copy = std::string(entry.ptx_text());
  return source;
}

}  // namespace jitcache::client::key
