#include <client/src/nvrtc/scan_recall.hpp>

#include <memory>
#include <mutex>
#include <unordered_map>

#include <client/src/nvrtc/directives_codec.hpp>
#include <client/src/nvrtc/include_directives.hpp>
#include <proto/byte_io.hpp>
#include <proto/digest.hpp>

namespace jitcache::client::nvrtc {

namespace {

struct Recalled {
  IncludeRecord record;
  std::vector<ProbeCheck> checks;
};

struct Recall {
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<const Recalled>> scans;
  std::size_t recalled = 0;
};

// Never destroyed: a compile on another thread may outlive static destruction at exit.
Recall& recall() {
  static auto* remembered = new Recall();
  return *remembered;
}

bool put_directives(std::string_view text, proto::ByteWriter& out) {
  auto directives = parse_include_directives(text);
  if (!directives) return false;
  encode_directives(*directives, out);
  return true;
}

// Names the payload's layout: entries of another layout are not read.
constexpr std::string_view k_memo_kind = "recalled scan 1";

std::string memo_key(const std::string& signature) {
  return proto::to_hex(proto::xxh3_128(proto::as_bytes(signature)));
}

std::vector<std::uint8_t> encoded(const std::string& signature, const Recalled& recalled) {
  std::vector<std::uint8_t> bytes;
  proto::ByteWriter out(bytes);
  out.blob32(proto::as_bytes(signature));
  out.blob32(proto::as_bytes(recalled.record.text));
  out.u64(recalled.record.files);
  out.u64(recalled.record.probes);
  out.u32(static_cast<std::uint32_t>(recalled.checks.size()));
  for (const ProbeCheck& check : recalled.checks) {
    out.u8(static_cast<std::uint8_t>(check.kind));
    if (check.kind == ProbeCheck::Kind::regular) encode_stamp(check.stamp, out);
  }
  return bytes;
}

// The entry's scan, when it is whole and of `signature` (its name is a digest of it).
std::optional<Recalled> decoded(const std::vector<std::uint8_t>& bytes, const std::string& signature) {
  proto::ByteReader in(proto::Bytes(bytes.data(), bytes.size()));
  auto stored_signature = in.blob32("signature");
  if (!stored_signature || std::string_view(reinterpret_cast<const char*>(stored_signature->data()),
                                            stored_signature->size()) != signature) {
    return std::nullopt;
  }
  auto text = in.blob32("record");
  auto files = in.u64("files");
  auto probes = in.u64("probes");
  auto count = in.u32("checks");
  if (!text || !files || !probes || !count) return std::nullopt;
  Recalled recalled;
  recalled.record.text.assign(reinterpret_cast<const char*>(text->data()), text->size());
  recalled.record.files = static_cast<std::size_t>(*files);
  recalled.record.probes = static_cast<std::size_t>(*probes);
  std::size_t lines = 0;
  for (const char c : recalled.record.text) lines += c == '\n' ? 1 : 0;
  if (*count != lines) return std::nullopt;
  recalled.checks.reserve(*count);
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto kind = in.u8("kind");
    if (!kind || *kind > static_cast<std::uint8_t>(ProbeCheck::Kind::regular)) return std::nullopt;
    ProbeCheck check;
    check.kind = static_cast<ProbeCheck::Kind>(*kind);
    if (check.kind == ProbeCheck::Kind::regular) {
      auto stamp = decode_stamp(in);
      if (!stamp) return std::nullopt;
      check.stamp = *stamp;
    }
    recalled.checks.push_back(check);
  }
  if (in.remaining() != 0) return std::nullopt;
  return recalled;
}

bool same_check(const ProbeCheck& was, const ProbeCheck& now) {
  if (was.kind != now.kind) return false;
  return was.kind != ProbeCheck::Kind::regular || was.stamp == now.stamp;
}

}  // namespace

ProbeCheck probe_check_of(const struct stat* st) {
  ProbeCheck check;
  if (st == nullptr) return check;
  check.kind = S_ISDIR(st->st_mode) ? ProbeCheck::Kind::directory : ProbeCheck::Kind::regular;
  if (check.kind == ProbeCheck::Kind::regular) check.stamp = stamp_of(*st);
  return check;
}

std::string scan_signature(const IncludeScanInput& input, const std::vector<std::string>& defines) {
  std::vector<std::uint8_t> bytes;
  proto::ByteWriter out(bytes);
  const auto put_list = [&](const std::vector<std::string>& list) {
    out.u32(static_cast<std::uint32_t>(list.size()));
    for (const std::string& item : list) out.blob32(proto::as_bytes(item));
  };
  out.blob32(proto::as_bytes(input.name));
  put_list(input.include_paths);
  put_list(input.pre_includes);
  put_list(defines);
  if (!put_directives(input.source, out)) return {};
  out.u32(static_cast<std::uint32_t>(input.headers.size()));
  for (const auto& [name, content] : input.headers) {
    out.blob32(proto::as_bytes(name));
    if (!put_directives(content, out)) return {};
  }
  return std::string(bytes.begin(), bytes.end());
}

std::optional<IncludeRecord> recall_scan(const std::string& signature) {
  if (signature.empty()) return std::nullopt;
  std::shared_ptr<const Recalled> recalled;
  {
    std::lock_guard lock(recall().mutex);
    if (const auto it = recall().scans.find(signature); it != recall().scans.end()) recalled = it->second;
  }
  if (!recalled) {
    // Another process of this uid may have made it (the scan memo, scan_memo.hpp).
    const auto stored = memo_find_keyed(k_memo_kind, memo_key(signature));
    if (!stored) return std::nullopt;
    auto found = decoded(*stored, signature);
    if (!found) return std::nullopt;
    recalled = std::make_shared<const Recalled>(std::move(*found));
    std::lock_guard lock(recall().mutex);
    if (recall().scans.size() >= k_max_recalled_scans) recall().scans.clear();
    recall().scans[signature] = recalled;
  }
  const std::string& text = recalled->record.text;
  std::string path;
  std::size_t at = 0;
  for (const ProbeCheck& was : recalled->checks) {
    const std::size_t nul = text.find('\0', at);
    if (nul == std::string::npos) return std::nullopt;
    path.assign(text, at, nul - at);
    at = text.find('\n', nul) + 1;
    struct stat st {};
    const bool found = ::stat(path.c_str(), &st) == 0;
    if (!same_check(was, probe_check_of(found ? &st : nullptr))) return std::nullopt;
  }
  std::lock_guard lock(recall().mutex);
  ++recall().recalled;
  return recalled->record;
}

void remember_scan(const std::string& signature, const IncludeRecord& record, std::vector<ProbeCheck> checks) {
  if (signature.empty()) return;
  auto recalled = std::make_shared<const Recalled>(Recalled{record, std::move(checks)});
  memo_store_keyed(k_memo_kind, memo_key(signature), encoded(signature, *recalled));
  std::lock_guard lock(recall().mutex);
  if (recall().scans.size() >= k_max_recalled_scans) recall().scans.clear();
  recall().scans[signature] = std::move(recalled);
}

std::size_t scans_recalled() {
  std::lock_guard lock(recall().mutex);
  return recall().recalled;
}

void forget_recalled_scans() {
  std::lock_guard lock(recall().mutex);
  recall().scans.clear();
}

}  // namespace jitcache::client::nvrtc
