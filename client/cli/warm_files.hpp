// The files `jitcache warm` reads, found from the paths it was given: a path named on the command
// line is read whatever its name (an ELF file as a host binary, anything else as PTX or a fat
// binary); a directory is searched recursively for *.ptx and *.fatbin files and for ELF executables
// and shared libraries (told apart from other files by their first bytes, so a directory such as a
// Python environment's site-packages is searched without reading its other files).
//
// Symbolic links are followed, to files and to directories, and every file and directory is visited
// once however many links lead to it (by device and inode), so a link loop ends the walk of that
// branch. Files are listed in the order of their paths, so output does not depend on the file
// system's order. ELF files for the GPU (cubins, EM_CUDA) are not host binaries: a directory's are
// not looked at.
// Thread safety: free functions over the file system; single-threaded like the CLI.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace jitcache::client::cli {

enum class WarmFileKind {
  image,        // read whole: PTX or a fat binary (or, when named, whatever it is: a line says why not)
  host_binary,  // an ELF executable or shared library: its fat binary sections are read
};

struct WarmFile {
  std::string path;
  WarmFileKind kind = WarmFileKind::image;
  bool named = false;  // given on the command line, not found in a directory
  std::string error;   // not empty: could not be looked at (a directory that cannot be listed)
};

struct WarmFileList {
  std::vector<WarmFile> files;
  std::size_t examined = 0;  // regular files met, the ones not taken included
};

WarmFileList list_warm_files(const std::vector<std::string>& paths);

}  // namespace jitcache::client::cli
