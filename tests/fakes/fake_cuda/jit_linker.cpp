#include <tests/fakes/fake_cuda/jit_linker.hpp>

namespace jitcache::fakes::fake_cuda {

std::string nvjitlink_arch_option(const fb::Arch& target) { return "-arch=" + fb::arch_name(target); }

JitLinker::JitLinker(const fb::Arch& target, const std::vector<std::string>& options) {
  std::vector<std::string> all{nvjitlink_arch_option(target)};
  all.insert(all.end(), options.begin(), options.end());
  std::vector<const char*> pointers;
  for (const std::string& option : all) pointers.push_back(option.c_str());
  nvJitLinkHandle handle = nullptr;
  m_create_result = nvJitLinkCreate(&handle, static_cast<std::uint32_t>(pointers.size()), pointers.data());
  if (m_create_result == NVJITLINK_SUCCESS) m_handle = handle;
}

JitLinker::~JitLinker() {
  if (m_handle != nullptr) nvJitLinkDestroy(&m_handle);
}

nvJitLinkResult JitLinker::add(nvJitLinkInputType type, std::span<const std::byte> data, const char* name) {
  return nvJitLinkAddData(m_handle, type, data.data(), data.size(), name != nullptr ? name : "input");
}

nvJitLinkResult JitLinker::complete() {
  nvJitLinkResult result = nvJitLinkComplete(m_handle);
  if (result != NVJITLINK_SUCCESS) return result;
  std::size_t size = 0;
  result = nvJitLinkGetLinkedCubinSize(m_handle, &size);
  if (result != NVJITLINK_SUCCESS) return result;
  m_cubin.resize(size);
  return nvJitLinkGetLinkedCubin(m_handle, m_cubin.data());
}

std::string JitLinker::error_log() const {
  std::size_t size = 0;
  if (m_handle == nullptr || nvJitLinkGetErrorLogSize(m_handle, &size) != NVJITLINK_SUCCESS || size == 0) return {};
  std::string log(size + 1, '\0');
  if (nvJitLinkGetErrorLog(m_handle, log.data()) != NVJITLINK_SUCCESS) return {};
  log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
  return log;
}

std::string JitLinker::info_log() const {
  std::size_t size = 0;
  if (m_handle == nullptr || nvJitLinkGetInfoLogSize(m_handle, &size) != NVJITLINK_SUCCESS || size == 0) return {};
  std::string log(size + 1, '\0');
  if (nvJitLinkGetInfoLog(m_handle, log.data()) != NVJITLINK_SUCCESS) return {};
  log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
  return log;
}

}  // namespace jitcache::fakes::fake_cuda
