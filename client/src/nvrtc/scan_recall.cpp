#include <client/src/nvrtc/scan_recall.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <client/src/nvrtc/directives_codec.hpp>
#include <client/src/nvrtc/include_directives.hpp>
#include <proto/byte_io.hpp>
#include <proto/digest.hpp>
#include <proto/regular_file.hpp>

namespace jitcache::client::nvrtc {

namespace {

struct Recalled {
  IncludeRecord record;  // relative: the lines of `relative_lines` hold a path's part after the directory
  std::vector<ProbeCheck> checks;
  std::vector<bool> relative_lines;  // empty unless remembered under a relative signature
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
constexpr std::string_view k_memo_kind = "recalled scan 3";

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
  out.u8(recalled.relative_lines.empty() ? 0 : 1);
  for (std::size_t i = 0; i < recalled.checks.size(); ++i) {
    const ProbeCheck& check = recalled.checks[i];
    out.u8(static_cast<std::uint8_t>(check.kind));
    if (check.kind == ProbeCheck::Kind::regular) encode_stamp(check.stamp, out);
    if (!recalled.relative_lines.empty()) out.u8(recalled.relative_lines[i] ? 1 : 0);
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
  auto relative = in.u8("relative");
  if (!relative || *relative > 1) return std::nullopt;
  recalled.checks.reserve(*count);
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto kind = in.u8("kind");
    if (!kind || *kind > static_cast<std::uint8_t>(ProbeCheck::Kind::content)) return std::nullopt;
    ProbeCheck check;
    check.kind = static_cast<ProbeCheck::Kind>(*kind);
    if (check.kind == ProbeCheck::Kind::regular) {
      auto stamp = decode_stamp(in);
      if (!stamp) return std::nullopt;
      check.stamp = *stamp;
    }
    recalled.checks.push_back(check);
    if (*relative == 1) {
      auto line = in.u8("relative line");
      if (!line || *line > 1) return std::nullopt;
      recalled.relative_lines.push_back(*line == 1);
    }
  }
  if (in.remaining() != 0) return std::nullopt;
  return recalled;
}

// The name's directory as the scan joins to it (include_scan.cpp's directory_of): "a/" of "a//k.cu".
std::string directory_of_name(const std::string& name) { return name.substr(0, name.rfind('/')); }

// Whether `path` is a regular file whose SHA-256 the record's `state` ("file <hex>") names.
bool same_content(const std::string& path, std::string_view state) {
  if (!state.starts_with("file ")) return false;
  const auto content = proto::read_regular_file(path, std::size_t{64} << 20);
  return content && proto::to_hex(proto::sha256(proto::as_bytes(*content))) == state.substr(5);
}

bool same_check(const ProbeCheck& was, const ProbeCheck& now) {
  if (was.kind != now.kind) return false;
  return was.kind != ProbeCheck::Kind::regular || was.stamp == now.stamp;
}

// The record remembered under `key`, its relative paths joined to `directory`, when every path is
// as it was.
std::optional<IncludeRecord> recall_under(const std::string& key, const std::string& directory) {
  std::shared_ptr<const Recalled> recalled;
  {
    std::lock_guard lock(recall().mutex);
    if (const auto it = recall().scans.find(key); it != recall().scans.end()) recalled = it->second;
  }
  if (!recalled) {
    // Another process of this uid may have made it (the scan memo, scan_memo.hpp).
    const auto stored = memo_find_keyed(k_memo_kind, memo_key(key));
    if (!stored) return std::nullopt;
    auto found = decoded(*stored, key);
    if (!found) return std::nullopt;
    recalled = std::make_shared<const Recalled>(std::move(*found));
    std::lock_guard lock(recall().mutex);
    if (recall().scans.size() >= k_max_recalled_scans) recall().scans.clear();
    recall().scans[key] = recalled;
  }
  const bool relative = !recalled->relative_lines.empty();
  const std::string& text = recalled->record.text;
  IncludeRecord record = recalled->record;
  if (relative) record.text.clear();
  std::string path;
  std::size_t at = 0;
  for (std::size_t line = 0; line < recalled->checks.size(); ++line) {
    const std::size_t nul = text.find('\0', at);
    if (nul == std::string::npos) return std::nullopt;
    const std::size_t end = text.find('\n', nul);
    path.assign(relative && recalled->relative_lines[line] ? directory : std::string());
    path.append(text, at, nul - at);
    if (recalled->checks[line].kind == ProbeCheck::Kind::content) {
      const std::string_view state = std::string_view(text).substr(nul + 1, end - nul - 1);
      if (!same_content(path, state)) return std::nullopt;
    } else {
      struct stat st {};
      const bool found = ::stat(path.c_str(), &st) == 0;
      if (!same_check(recalled->checks[line], probe_check_of(found ? &st : nullptr))) return std::nullopt;
    }
    if (relative) {
      record.text += path;
      record.text.append(text, nul, end + 1 - nul);
    }
    at = end + 1;
  }
  std::lock_guard lock(recall().mutex);
  ++recall().recalled;
  return record;
}

}  // namespace

ProbeCheck probe_check_of(const struct stat* st) {
  ProbeCheck check;
  if (st == nullptr) return check;
  check.kind = S_ISDIR(st->st_mode) ? ProbeCheck::Kind::directory : ProbeCheck::Kind::regular;
  if (check.kind == ProbeCheck::Kind::regular) check.stamp = stamp_of(*st);
  return check;
}

ScanSignature scan_signature(const IncludeScanInput& input, const std::vector<std::string>& defines) {
  std::vector<std::uint8_t> bytes;
  proto::ByteWriter out(bytes);
  const auto put_list = [&](const std::vector<std::string>& list) {
    out.u32(static_cast<std::uint32_t>(list.size()));
    for (const std::string& item : list) out.blob32(proto::as_bytes(item));
  };
  put_list(input.include_paths);
  put_list(input.pre_includes);
  put_list(defines);
  if (!put_directives(input.source, out)) return {};
  out.u32(static_cast<std::uint32_t>(input.headers.size()));
  for (const auto& [name, content] : input.headers) {
    out.blob32(proto::as_bytes(name));
    if (!put_directives(content, out)) return {};
  }
  const std::string body(bytes.begin(), bytes.end());
  ScanSignature signature;
  signature.whole = "W" + std::to_string(input.name.size()) + ":" + input.name + body;
  const std::size_t slash = input.name.rfind('/');
  // Rationale: a directory the texts or options name (an -I under it, an absolute include into
  // it) would make paths under it that are not joined to it; "/" holds every absolute path.
  if (slash != std::string::npos && slash != 0 && body.find(input.name.substr(0, slash)) == std::string::npos) {
    signature.directory = directory_of_name(input.name);
    const std::string after = input.name.substr(signature.directory.size());
    // The directory's last character decides how a name is joined to it ("a/" + x, "a" + "/" + x).
    const char joint = signature.directory.back() == '/' ? '/' : '.';
    signature.relative = "R" + std::string(1, joint) + std::to_string(after.size()) + ":" + after + body;
  }
  return signature;
}

std::optional<IncludeRecord> recall_scan(const ScanSignature& signature) {
  for (const std::string* key : {&signature.relative, &signature.whole}) {
    if (key->empty()) continue;
    if (auto record = recall_under(*key, signature.directory)) return record;
  }
  return std::nullopt;
}

void remember_scan(const ScanSignature& signature, const IncludeRecord& record, std::vector<ProbeCheck> checks,
                   const std::vector<bool>& in_main_directory) {
  if (signature.whole.empty()) return;
  Recalled recalled{record, std::move(checks), {}};
  const std::string* key = &signature.whole;
  if (!signature.relative.empty()) {
    // Relative only when the paths under the directory are exactly those joined to it.
    std::string text;
    std::vector<bool> relative_lines;
    bool joined_only = true;
    std::size_t at = 0;
    for (std::size_t line = 0; joined_only && line < recalled.checks.size(); ++line) {
      const std::size_t nul = record.text.find('\0', at);
      const std::size_t end = record.text.find('\n', nul);
      const std::string_view path = std::string_view(record.text).substr(at, nul - at);
      const bool under = path.size() > signature.directory.size() && path.starts_with(signature.directory);
      joined_only = line < in_main_directory.size() && under == in_main_directory[line];
      relative_lines.push_back(under);
      text += under ? path.substr(signature.directory.size()) : path;
      text.append(record.text, nul, end + 1 - nul);
      at = end + 1;
    }
    if (joined_only) {
      recalled.record.text = std::move(text);
      recalled.relative_lines = std::move(relative_lines);
      key = &signature.relative;
    }
  }
  auto shared = std::make_shared<const Recalled>(std::move(recalled));
  memo_store_keyed(k_memo_kind, memo_key(*key), encoded(*key, *shared));
  std::lock_guard lock(recall().mutex);
  if (recall().scans.size() >= k_max_recalled_scans) recall().scans.clear();
  recall().scans[*key] = std::move(shared);
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
