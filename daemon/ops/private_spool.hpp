// A private, unlinked file of the daemon's state directory (O_TMPFILE, else a named file unlinked
// at once) that a bundle operation writes and reads back: an import's checked entry records, an
// export's finished bundle before it is copied to the caller's file (bundle_service.hpp). Nobody
// but the daemon can open it, so what the daemon wrote is what it reads back, and it vanishes with
// the descriptor, also when the daemon is killed.
//
// Every write is limited to the bytes the spool was granted (spool_budget.hpp): a caller cannot
// make it grow past what was checked before the first byte was written.
// Thread safety: one user at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <common/result.hpp>
#include <common/unique_fd.hpp>
#include <proto/digest.hpp>

namespace jitcache::daemon::ops {

class PrivateSpool {
 public:
  // io when `dir` takes no file.
  static common::Result<PrivateSpool> create(const std::string& dir, std::uint64_t limit);

  // Appends `bytes`; too_large past the limit, no_space when the disk is full.
  common::Result<void> append(proto::Bytes bytes);
  // A record: its length (u64) and its bytes, read back in order by next_record().
  common::Result<void> append_record(proto::Bytes record);
  common::Result<std::optional<std::vector<std::uint8_t>>> next_record();
  // Reads `out.size()` bytes at `offset` (the copy of an export to the caller's file).
  common::Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) const;

  std::uint64_t size() const { return m_size; }
  std::uint64_t limit() const { return m_limit; }
  // After the grant grew (spool_budget.hpp Grant::grow).
  void raise_limit(std::uint64_t limit) { m_limit = limit; }
  int fd() const { return m_fd.get(); }

 private:
  PrivateSpool(common::UniqueFd fd, std::uint64_t limit) : m_fd(std::move(fd)), m_limit(limit) {}
  common::Result<void> check_room(std::uint64_t bytes) const;
  common::UniqueFd m_fd;
  std::uint64_t m_limit;
  std::uint64_t m_size = 0;
  std::uint64_t m_read = 0;
};

}  // namespace jitcache::daemon::ops
