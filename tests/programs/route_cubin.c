/* A cubin passes through byte for byte: loaded with cuModuleLoadData and with cuLibraryLoadData,
 * each followed by what the fake driver says it was handed (kind, size, SHA-256), so that the
 * output with and without the preload library can be compared. CI only (the fake's control API).
 * Usage: route_cubin CUBIN */
#include <tests/fakes/fake_cuda/fake_cuda_control.h>
#include <tests/programs/program_io.h>

static void print_last_image(const char* what) {
  fake_cuda_image_info info;
  if (fake_cuda_last_image(&info) != 0) {
    printf("%s: no image\n", what);
    return;
  }
  printf("%s: %s kind %d, %llu bytes, sha256 %s\n", what, info.entry_point, info.kind, info.size, info.sha256_hex);
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  size_t size = 0;
  char* cubin = read_image(argv[1], &size);
  if (cubin == NULL) return 3;
  print_result("cuInit", cuInit(0));
  CUmodule module = NULL;
  print_result("cuModuleLoadData", cuModuleLoadData(&module, cubin));
  print_last_image("module");
  CUlibrary library = NULL;
  print_result("cuLibraryLoadData", cuLibraryLoadData(&library, cubin, NULL, NULL, 0, NULL, NULL, 0));
  print_last_image("library");
  if (library != NULL) cuLibraryUnload(library);
  free(cubin);
  return 0;
}
