#include <client/cli/warm_files.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <filesystem>
#include <set>
#include <span>
#include <system_error>
#include <utility>

#include <client/src/fatbin/host_elf.hpp>
#include <common/unique_fd.hpp>

namespace jitcache::client::cli {

namespace fs = std::filesystem;

namespace {

using FileId = std::pair<dev_t, ino_t>;

bool warmable_name(const fs::path& path) {
  const std::string extension = path.extension().string();
  return extension == ".ptx" || extension == ".fatbin";
}

// Whether the file is an ELF file for the host (not a cubin): one open and one read of its first
// bytes. O_NONBLOCK: a FIFO named like a library must not stop the walk (only regular files come
// here, but the file may have been replaced since it was listed).
bool is_host_elf(const std::string& path) {
  const common::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd) return false;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::array<std::byte, fatbin::k_elf_ident_size> head{};
  const ssize_t n = ::pread(fd.get(), head.data(), head.size(), 0);
  if (n != static_cast<ssize_t>(head.size())) return false;
  const std::uint16_t machine = fatbin::elf_machine(head);
  return machine != 0 && machine != fatbin::k_elf_machine_cuda;
}

struct Found {
  std::string path;
  WarmFileKind kind;
  FileId id;
};

// Walks `root` depth first in the order of the names, following links, entering each directory once.
void walk(const fs::path& root, std::set<FileId>& directories, std::vector<Found>& found, WarmFileList& list) {
  std::vector<fs::path> pending{root};
  while (!pending.empty()) {
    const fs::path directory = std::move(pending.back());
    pending.pop_back();
    std::error_code ec;
    std::vector<fs::path> entries;
    for (fs::directory_iterator it(directory, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
         it.increment(ec)) {
      entries.push_back(it->path());
    }
    if (ec) {
      list.files.push_back(
          WarmFile{directory.string(), WarmFileKind::image, false, "cannot list the directory: " + ec.message()});
    }
    std::sort(entries.begin(), entries.end());
    std::vector<fs::path> subdirectories;
    for (const fs::path& entry : entries) {
      const std::string path = entry.string();
      struct stat st {};
      if (::stat(path.c_str(), &st) != 0) continue;  // a dangling link, or gone since listed
      const FileId id{st.st_dev, st.st_ino};
      if (S_ISDIR(st.st_mode)) {
        if (directories.insert(id).second) subdirectories.push_back(entry);
        continue;
      }
      if (!S_ISREG(st.st_mode)) continue;
      ++list.examined;
      if (warmable_name(entry)) {
        found.push_back(Found{path, WarmFileKind::image, id});
      } else if (is_host_elf(path)) {
        found.push_back(Found{path, WarmFileKind::host_binary, id});
      }
    }
    pending.insert(pending.end(), subdirectories.rbegin(), subdirectories.rend());
  }
}

}  // namespace

WarmFileList list_warm_files(const std::vector<std::string>& paths) {
  WarmFileList list;
  std::set<FileId> directories;
  std::set<FileId> files;
  for (const std::string& path : paths) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      // Named: read as given, whatever it is, so that a missing or unusable file gets its line.
      if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        ++list.examined;
        if (!files.insert(FileId{st.st_dev, st.st_ino}).second) continue;
      }
      list.files.push_back(
          WarmFile{path, is_host_elf(path) ? WarmFileKind::host_binary : WarmFileKind::image, true, {}});
      continue;
    }
    if (!directories.insert(FileId{st.st_dev, st.st_ino}).second) continue;
    std::vector<Found> found;
    walk(path, directories, found, list);
    // Sorted by path, so the first of several paths to one file is the one kept and shown.
    std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.path < b.path; });
    for (Found& file : found) {
      if (files.insert(file.id).second) list.files.push_back(WarmFile{std::move(file.path), file.kind, false, {}});
    }
  }
  return list;
}

}  // namespace jitcache::client::cli
