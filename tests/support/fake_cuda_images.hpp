// Images for tests of the fake CUDA driver (tests/fakes/fake_cuda) and of code run against it: the
// PTX of tests/data, cubins made by nvJitLink for an arch of the test's choosing (nvJitLink needs no
// GPU), fat binary containers laid out as docs/fatbin.md describes, and GuardedImage, which puts
// bytes right before an unreadable page so a reader that goes past them faults instead of reading
// whatever follows on the heap.
// Thread safety: free functions and a move-less owner of one mapping; Catch2 assertions inside, so
// call them from the test's thread.
#pragma once

#include <tests/support/temp_dir.hpp>

#include <nvJitLink.h>
#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace jitcache::testing::fake_cuda {

using Bytes = std::vector<std::byte>;

inline std::string small_kernel_ptx() {
  return jitcache::testing::read_file(std::string(JITCACHE_TEST_DATA_DIR) + "/small_kernel.ptx");
}

inline std::string with_line_replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  return text;
}

inline std::string ptx_for_target(const std::string& target) {
  return with_line_replaced(small_kernel_ptx(), ".target sm_90", ".target " + target);
}

inline Bytes to_bytes(const void* data, std::size_t size) {
  Bytes bytes(size);
  if (size != 0) std::memcpy(bytes.data(), data, size);
  return bytes;
}

inline Bytes ptx_bytes(const std::string& text) { return to_bytes(text.data(), text.size()); }

// A cubin made by nvJitLink itself, for an arch of our choosing.
inline Bytes nvjitlink_cubin(const std::string& ptx, const std::string& arch) {
  const std::string option = "-arch=" + arch;
  const char* options[] = {option.c_str()};
  nvJitLinkHandle handle = nullptr;
  REQUIRE(nvJitLinkCreate(&handle, 1, options) == NVJITLINK_SUCCESS);
  REQUIRE(nvJitLinkAddData(handle, NVJITLINK_INPUT_PTX, ptx.data(), ptx.size(), "kernel.ptx") == NVJITLINK_SUCCESS);
  REQUIRE(nvJitLinkComplete(handle) == NVJITLINK_SUCCESS);
  std::size_t size = 0;
  REQUIRE(nvJitLinkGetLinkedCubinSize(handle, &size) == NVJITLINK_SUCCESS);
  Bytes cubin(size);
  REQUIRE(nvJitLinkGetLinkedCubin(handle, cubin.data()) == NVJITLINK_SUCCESS);
  nvJitLinkDestroy(&handle);
  return cubin;
}

class GuardedImage {
 public:
  explicit GuardedImage(std::span<const std::byte> bytes) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t data_pages = (bytes.size() + page - 1) / page;
    m_size = (data_pages + 1) * page;
    void* base = mmap(nullptr, m_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(base != MAP_FAILED);
    m_base = static_cast<std::byte*>(base);
    REQUIRE(mprotect(m_base + data_pages * page, page, PROT_NONE) == 0);
    m_data = m_base + data_pages * page - bytes.size();
    if (!bytes.empty()) std::memcpy(m_data, bytes.data(), bytes.size());
  }
  ~GuardedImage() { munmap(m_base, m_size); }
  GuardedImage(const GuardedImage&) = delete;
  GuardedImage& operator=(const GuardedImage&) = delete;

  const void* data() const { return m_data; }
  std::byte* mutable_data() { return m_data; }
  // Makes the image's pages unreadable, as if the caller had freed it.
  void revoke() { REQUIRE(mprotect(m_base, m_size, PROT_NONE) == 0); }

 private:
  std::byte* m_base = nullptr;
  std::byte* m_data = nullptr;
  std::size_t m_size = 0;
};

// One entry of a fat binary container.
struct FatEntry {
  std::uint16_t kind = 2;  // 1 PTX, 2 cubin
  unsigned sm = 90;
  bool arch_specific = false;
  std::uint16_t version_major = 1;
  std::uint16_t version_minor = 8;
  Bytes payload;
};

template <class T>
void put(Bytes& out, std::size_t offset, T value) {
  std::memcpy(out.data() + offset, &value, sizeof(T));
}

inline Bytes fat_binary(const std::vector<FatEntry>& entries) {
  Bytes body;
  for (const FatEntry& entry : entries) {
    Bytes payload = entry.payload;
    if (entry.kind == 1) payload.push_back(std::byte{0});
    payload.resize((payload.size() + 7) / 8 * 8);
    Bytes header(64);
    put<std::uint16_t>(header, 0, entry.kind);
    put<std::uint16_t>(header, 2, 0x0101);
    put<std::uint32_t>(header, 4, 64);
    put<std::uint64_t>(header, 8, payload.size());
    put<std::uint16_t>(header, 24, entry.version_minor);
    put<std::uint16_t>(header, 26, entry.version_major);
    put<std::uint32_t>(header, 28, entry.sm);
    put<std::uint64_t>(header, 40, 0x11 | (entry.arch_specific ? 0x100000 : 0));
    put<std::uint64_t>(header, 56, payload.size());
    body.insert(body.end(), header.begin(), header.end());
    body.insert(body.end(), payload.begin(), payload.end());
  }
  Bytes container(16);
  put<std::uint32_t>(container, 0, 0xBA55ED50);
  put<std::uint16_t>(container, 4, 1);
  put<std::uint16_t>(container, 6, 16);
  put<std::uint64_t>(container, 8, body.size());
  container.insert(container.end(), body.begin(), body.end());
  return container;
}

// The nvcc wrapper (__fatBinC_Wrapper_t, magic 0x466243B1) around a container, as cudart hands it to
// cuLibraryLoadData (docs/driver-facts.md §3, §6).
struct FatbinWrapper {
  int magic = static_cast<int>(0x466243B1);
  int version = 1;
  const void* data = nullptr;
  void* filename_or_fatbins = nullptr;
};

}  // namespace jitcache::testing::fake_cuda
