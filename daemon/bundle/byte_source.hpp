// Where a bundle's bytes come from: a file descriptor (a client's file, passed over the socket; a
// file of import_dir) read from an offset of its own, or memory (tests, the fuzz target).
// Thread safety: one reader at a time per source.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include <common/result.hpp>

namespace jitcache::daemon::bundle {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Fills `out` exactly; an ErrorCode::corrupt error ("the file ends ...") when the bytes run out
  // first, ErrorCode::io when reading fails.
  virtual common::Result<void> read_exactly(std::span<std::uint8_t> out) = 0;
  // Bytes not read yet (the file's size when it was opened, less what was read).
  virtual std::uint64_t remaining() const = 0;
};

// Reads a regular file with pread from offset 0, so two readers of one descriptor do not share a
// file position. Its size is taken once (fstat); a file that shrinks meanwhile reads as truncated.
class FdSource final : public ByteSource {
 public:
  // ErrorCode::invalid_argument when `fd` is not a regular file (a pipe or a socket could block the
  // reader for good, and its size is unknown).
  static common::Result<FdSource> open(int fd);
  common::Result<void> read_exactly(std::span<std::uint8_t> out) override;
  std::uint64_t remaining() const override { return m_size - m_offset; }
  std::uint64_t size() const { return m_size; }

 private:
  FdSource(int fd, std::uint64_t size) : m_fd(fd), m_size(size) {}
  int m_fd;
  std::uint64_t m_size;
  std::uint64_t m_offset = 0;
};

// Reads from `inner` and hands every byte read to `copy` as well (a private spool file the second
// pass of an import reads instead of the caller's file: bundle_service.hpp).
class CopyingSource final : public ByteSource {
 public:
  using Copy = std::function<common::Result<void>(std::span<const std::uint8_t>)>;
  CopyingSource(ByteSource& inner, Copy copy) : m_inner(inner), m_copy(std::move(copy)) {}
  common::Result<void> read_exactly(std::span<std::uint8_t> out) override;
  std::uint64_t remaining() const override { return m_inner.remaining(); }

 private:
  ByteSource& m_inner;
  Copy m_copy;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::span<const std::uint8_t> bytes) : m_bytes(bytes) {}
  common::Result<void> read_exactly(std::span<std::uint8_t> out) override;
  std::uint64_t remaining() const override { return m_bytes.size() - m_offset; }

 private:
  std::span<const std::uint8_t> m_bytes;
  std::size_t m_offset = 0;
};

}  // namespace jitcache::daemon::bundle
