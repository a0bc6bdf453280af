// An unmodified program that links two PTX modules at run time, as CuPy and numba do
// (docs/transparent.md "Link sessions"): tests/data/link/link_caller.ptx, whose kernel apply_scale calls
// an extern .func, and link_callee.ptx, which defines it. It links them, loads the image, runs the
// kernel on the GPU and checks every element, printing lines that are the same on every run.
//   culink     cuLinkCreate / cuLinkAddData / cuLinkComplete, with log buffers and CU_JIT_WALL_TIME
//   nvjitlink  nvJitLinkCreate (-arch of the device) / AddData / Complete / GetLinkedCubin
//   names      two cuLink sessions of the same inputs under other names (and one with a per-input
//              option): whether the driver's images are byte for byte the same (docs/driver-facts.md §1)
// Usage: link_scale CALLER.ptx CALLEE.ptx culink|nvjitlink|names
#include <cuda.h>
#include <nvJitLink.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::uint64_t fingerprint(const void* data, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::uint64_t hash = 14695981039346656037ull;
  for (std::size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  return hash;
}

struct Inputs {
  std::string caller;
  std::string callee;
};

// A cuLink session of both inputs under these names; the image, or empty with the failure printed.
std::vector<char> link_with_driver(const Inputs& in, const char* caller_name, const char* callee_name,
                                   bool callee_lineinfo) {
  char info[4096] = {0};
  char error[4096] = {0};
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_WALL_TIME};
  void* values[] = {info, reinterpret_cast<void*>(sizeof(info)), error, reinterpret_cast<void*>(sizeof(error)),
                    nullptr};
  CUlinkState state = nullptr;
  CUresult result = cuLinkCreate(5, options, values, &state);
  std::printf("cuLinkCreate: %d\n", static_cast<int>(result));
  if (result != CUDA_SUCCESS) return {};
  std::string caller = in.caller;
  std::string callee = in.callee;
  result = cuLinkAddData(state, CU_JIT_INPUT_PTX, caller.data(), caller.size() + 1, caller_name, 0, nullptr, nullptr);
  std::printf("cuLinkAddData caller: %d\n", static_cast<int>(result));
  CUjit_option input_options[] = {CU_JIT_GENERATE_LINE_INFO};
  void* input_values[] = {reinterpret_cast<void*>(std::uintptr_t{1})};
  result = cuLinkAddData(state, CU_JIT_INPUT_PTX, callee.data(), callee.size() + 1, callee_name,
                         callee_lineinfo ? 1 : 0, input_options, input_values);
  std::printf("cuLinkAddData callee: %d\n", static_cast<int>(result));
  void* cubin = nullptr;
  std::size_t size = 0;
  result = cuLinkComplete(state, &cubin, &size);
  std::printf("cuLinkComplete: %d\n", static_cast<int>(result));
  std::vector<char> image;
  if (result == CUDA_SUCCESS) image.assign(static_cast<char*>(cubin), static_cast<char*>(cubin) + size);
  else std::printf("error log: %s\n", error);
  cuLinkDestroy(state);
  return image;
}

std::vector<char> link_with_nvjitlink(const Inputs& in) {
  int major = 0;
  int minor = 0;
  CUdevice device = 0;
  cuCtxGetDevice(&device);
  cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  const std::string arch = "-arch=sm_" + std::to_string(major * 10 + minor);
  const char* options[] = {arch.c_str(), "-O3"};
  nvJitLinkHandle handle = nullptr;
  nvJitLinkResult result = nvJitLinkCreate(&handle, 2, options);
  std::printf("nvJitLinkCreate: %d\n", static_cast<int>(result));
  if (result != NVJITLINK_SUCCESS) return {};
  result = nvJitLinkAddData(handle, NVJITLINK_INPUT_PTX, in.caller.c_str(), in.caller.size() + 1, "caller");
  std::printf("nvJitLinkAddData caller: %d\n", static_cast<int>(result));
  result = nvJitLinkAddData(handle, NVJITLINK_INPUT_PTX, in.callee.c_str(), in.callee.size() + 1, "callee");
  std::printf("nvJitLinkAddData callee: %d\n", static_cast<int>(result));
  result = nvJitLinkComplete(handle);
  std::printf("nvJitLinkComplete: %d\n", static_cast<int>(result));
  std::vector<char> image;
  std::size_t size = 0;
  if (result == NVJITLINK_SUCCESS && nvJitLinkGetLinkedCubinSize(handle, &size) == NVJITLINK_SUCCESS) {
    image.resize(size);
    if (nvJitLinkGetLinkedCubin(handle, image.data()) != NVJITLINK_SUCCESS) image.clear();
  }
  nvJitLinkDestroy(&handle);
  return image;
}

// Loads the image, runs apply_scale over n elements and counts the wrong ones (-1: could not run).
int run_kernel(const std::vector<char>& image, int n) {
  CUmodule module = nullptr;
  CUresult result = cuModuleLoadData(&module, image.data());
  std::printf("cuModuleLoadData: %d\n", static_cast<int>(result));
  if (result != CUDA_SUCCESS) return -1;
  CUfunction function = nullptr;
  result = cuModuleGetFunction(&function, module, "apply_scale");
  std::printf("apply_scale: %d\n", static_cast<int>(result));
  if (result != CUDA_SUCCESS) return -1;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i % 1000) * 0.25f;
  float* in = nullptr;
  float* out = nullptr;
  cudaMalloc(&in, n * sizeof(float));
  cudaMalloc(&out, n * sizeof(float));
  cudaMemcpy(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  void* args[] = {&in, &out, &n};
  result = cuLaunchKernel(function, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr);
  const cudaError_t finished = cudaDeviceSynchronize();
  std::printf("cuLaunchKernel: %d, synchronize: %d\n", static_cast<int>(result), static_cast<int>(finished));
  std::vector<float> device_result(n);
  cudaMemcpy(device_result.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(in);
  cudaFree(out);
  cuModuleUnload(module);
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    if (device_result[i] != 2.0f * host[i] + static_cast<float>(i % 7)) ++wrong;
  }
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  const Inputs inputs{read_file(argv[1]), read_file(argv[2])};
  if (inputs.caller.empty() || inputs.callee.empty()) return 3;
  cudaFree(nullptr);  // the primary context, current from here on
  const std::string mode = argv[3];
  if (mode == "names") {
    const auto first = link_with_driver(inputs, "link_caller.ptx", "link_callee.ptx", false);
    const auto renamed = link_with_driver(inputs, "a", "another name", false);
    const auto again = link_with_driver(inputs, "link_caller.ptx", "link_callee.ptx", false);
    const auto lineinfo = link_with_driver(inputs, "link_caller.ptx", "link_callee.ptx", true);
    const auto lineinfo_renamed = link_with_driver(inputs, "x", "y", true);
    std::printf("names: %s; again: %s; with a per-input -lineinfo: %s, renamed: %s\n",
                first == renamed ? "same image" : "images differ", first == again ? "same image" : "images differ",
                first == lineinfo ? "same image" : "images differ",
                lineinfo == lineinfo_renamed ? "same image" : "images differ");
    return first.empty() ? 1 : 0;
  }
  const std::vector<char> image = mode == "nvjitlink" ? link_with_nvjitlink(inputs) : link_with_driver(inputs, "link_caller.ptx", "link_callee.ptx", true);
  if (image.empty()) return 1;
  std::printf("image: %zu bytes, fingerprint %016llx\n", image.size(),
              static_cast<unsigned long long>(fingerprint(image.data(), image.size())));
  const int n = 1 << 20;
  const int wrong = run_kernel(image, n);
  std::printf("apply_scale: %d elements, %d wrong\n", n, wrong);
  return wrong == 0 ? 0 : 1;
}
