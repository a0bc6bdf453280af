// Whether a file descriptor's pages live in memory rather than on a disk: a memfd, a file of tmpfs
// (/dev/shm, often /tmp and /run), ramfs or hugetlbfs, or may: a file of an overlay, whose upper
// layer fstatfs does not name (a container's root is one too; the CLI then writes it itself). The daemon never writes a
// bundle into such a file, because every byte would be host memory charged to the daemon (and, under a memory cgroup,
// to its limit) for as long as the caller keeps the file; the CLI, when asked to write one there,
// has the daemon write into a pipe and writes the file itself, at its own cost
// (docs/security.md "Bundles").
// Thread safety: a free function.
#pragma once

#include <optional>
#include <string>

namespace jitcache::common {

// The file system's name ("tmpfs or a memfd", "ramfs", "hugetlbfs", "overlayfs, ...") when `fd`'s file is memory
// backed; nullopt when it is not, or when fstatfs fails (then the write itself will tell).
std::optional<std::string> memory_backed_file_system(int fd);

}  // namespace jitcache::common
