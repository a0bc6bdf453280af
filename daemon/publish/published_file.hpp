// One published image file (proto/published_image.hpp) written into the published directory so
// that a reader never sees a partial file: the bytes go to a temporary name (a leading '.', which
// no fast key id has) and are renamed into place in a second step, which the publisher takes under
// its lock (publisher.hpp). Files are mode 0640 and carry the directory's group (the socket's; a
// chown only where the daemon's own group is another): that group reads them, nobody else.
// Thread safety: free functions over a directory descriptor; distinct temporary names per call.
#pragma once

#include <string>

#include <common/result.hpp>
#include <proto/digest.hpp>

namespace jitcache::daemon::publish {

// A file written under its temporary name; rename_into_place() or discard() ends it.
struct TemporaryFile {
  std::string temp_name;
  std::string final_name;
  std::uint64_t bytes = 0;
};

// Writes `head` then `image` to a fresh temporary file in `dir_fd`. Errors: no_space (a full
// tmpfs), io (EACCES, …), with the file removed again.
common::Result<TemporaryFile> write_temporary(int dir_fd, const std::string& final_name, proto::Bytes head,
                                              proto::Bytes image);
common::Result<void> rename_into_place(int dir_fd, const TemporaryFile& file);
void discard(int dir_fd, const TemporaryFile& file);
// Removes a published file; a file already gone is not an error.
common::Result<void> remove_published(int dir_fd, const std::string& name);

}  // namespace jitcache::daemon::publish
