// One input of a link session as the session keeps it until the link is complete: the bytes (a
// copy: the caller may free its buffer as soon as cuLinkAddData or nvJitLinkAddData returns), what
// they are, the name the caller gave, and for cuLink* the input's own options, canonical for the key
// and as given for the real call (docs/transparent.md "Link sessions").
//
// A file added by path (cuLinkAddFile, nvJitLinkAddFile) is read when it is added and kept as
// bytes: the key names what the file held then, and the real link, should one be needed, is given
// those same bytes, never the path again (the file may have changed since).
// Thread safety: plain values; the readers are free functions.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <common/result.hpp>
#include <proto/link_content.hpp>

namespace jitcache::client::link {

// Rationale: a session keeps copies of its inputs until Complete. Past this many bytes in one session
// (a link of several large libraries) the copies are not worth it: the session goes to the real
// linker and is not cached. The largest image a daemon stores by default is 64 MiB.
inline constexpr std::size_t k_max_session_bytes = std::size_t{256} << 20;

struct LinkInput {
  proto::LinkInputKind kind = proto::LinkInputKind::ptx;
  int given_type = 0;  // the CUjitInputType or nvJitLinkInputType the caller passed, for the real call
  // The `size` bytes given, then one NUL that is no part of them: PTX text must be NUL-terminated
  // for the linker, and a caller may pass its length without the terminator.
  std::vector<std::uint8_t> bytes;
  std::size_t size = 0;
  std::string name;
  // cuLink* only: the input's canonical option string (proto/jit_options.hpp) for the key, and its
  // option arrays as given for the real cuLinkAddData (only keyed options: integers by value).
  std::string canonical_options;
  std::vector<CUjit_option> jit_options;
  std::vector<void*> jit_values;

  proto::Bytes data() const { return proto::Bytes(bytes.data(), size); }
  // For the real call: the copy, NUL-terminated one past `size`.
  void* buffer() { return bytes.data(); }
  proto::LinkInputView view() const { return proto::LinkInputView{kind, data(), canonical_options}; }
};

// A copy of `size` bytes at `data` (with the NUL after them). `data` may be null only when size is 0.
LinkInput copy_input(proto::LinkInputKind kind, int given_type, const void* data, std::size_t size, const char* name);

// The file's whole contents; ErrorCode::unavailable when it cannot be read, ErrorCode::too_large
// over `max_bytes`.
common::Result<std::vector<std::uint8_t>> read_input_file(const char* path, std::size_t max_bytes);

// The key's kind of a cuLink input type; nullopt for CU_JIT_INPUT_NVVM and unknown types.
std::optional<proto::LinkInputKind> kind_of_cu_input(CUjitInputType type);
// The key's kind of an nvJitLinkInputType; nullopt for NONE, INDEX, ANY and unknown types.
std::optional<proto::LinkInputKind> kind_of_nvjitlink_input(int type);
// The nvJitLinkInputType of a kind, for a COMPILE's inputs and the daemon's worker.
int nvjitlink_input_of(proto::LinkInputKind kind);

}  // namespace jitcache::client::link
