#include <client/src/driver/driver_identity.hpp>

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <array>
#include <cctype>
#include <fstream>
#include <sstream>

namespace jitcache::client::driver {

namespace {

bool is_build_text(std::string_view text) {
  if (text.empty() || text.size() > 64 || !std::isdigit(static_cast<unsigned char>(text.front()))) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.') return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> build_from_library_name(std::string_view path) {
  constexpr std::string_view k_stem = "libcuda.so.";
  std::string_view name =
      path.substr(path.find_last_of('/') == std::string_view::npos ? 0 : path.find_last_of('/') + 1);
  if (!name.starts_with(k_stem)) return std::nullopt;
  std::string_view version = name.substr(k_stem.size());
  // "libcuda.so.1" is the soname link, not a build.
  if (!is_build_text(version) || version.find('.') == std::string_view::npos) return std::nullopt;
  return std::string(version);
}

std::optional<std::string> build_from_proc_version(std::string_view text) {
  // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ..."
  std::string line(text.substr(0, text.find('\n')));
  std::istringstream words(line);
  std::string word;
  while (words >> word) {
    if (is_build_text(word) && word.find('.') != std::string::npos) return word;
  }
  return std::nullopt;
}

DriverIdentity identify_driver(const void* symbol) {
  DriverIdentity identity;
  Dl_info info{};
  if (::dladdr(symbol, &info) != 0 && info.dli_fname != nullptr) {
    std::array<char, PATH_MAX> resolved{};
    identity.library_path = ::realpath(info.dli_fname, resolved.data()) != nullptr ? resolved.data() : info.dli_fname;
    if (auto build = build_from_library_name(identity.library_path)) {
      identity.build = *build;
      return identity;
    }
  }
  std::ifstream proc("/proc/driver/nvidia/version");
  std::string first_line;
  if (proc && std::getline(proc, first_line)) {
    if (auto build = build_from_proc_version(first_line)) {
      identity.build = *build;
      return identity;
    }
  }
  identity.build = "unknown";
  return identity;
}

PtxIsaVersion max_ptx_isa(int api) {
  if (api >= 13000) return {9, static_cast<unsigned>((api % 1000) / 10)};
  struct Row {
    int api;
    PtxIsaVersion isa;
  };
  // CUDA release → the PTX ISA it introduced (docs/driver-facts.md §2 "Compatibility").
  constexpr std::array<Row, 17> k_table{{
      {12090, {8, 8}},
      {12080, {8, 7}},
      {12070, {8, 6}},
      {12050, {8, 5}},
      {12040, {8, 4}},
      {12030, {8, 3}},
      {12020, {8, 2}},
      {12010, {8, 1}},
      {12000, {8, 0}},
      {11080, {7, 8}},
      {11070, {7, 7}},
      {11060, {7, 6}},
      {11050, {7, 5}},
      {11040, {7, 4}},
      {11030, {7, 3}},
      {11020, {7, 2}},
      {11010, {7, 1}},
  }};
  for (const Row& row : k_table) {
    if (api >= row.api) return row.isa;
  }
  return {7, 0};
}

}  // namespace jitcache::client::driver
