/* (e) What cudart 13 does with a program's embedded fat binary (docs/driver-facts.md §6): one
 * cuLibraryLoadData of its __fatBinC_Wrapper_t, then cuLibraryGetKernel by name. The fat binary is
 * read from a file and wrapped here as nvcc's host code wraps it; the library options ask the
 * driver to keep using the caller's bytes (CU_LIBRARY_BINARY_IS_PRESERVED) when PRESERVE is given.
 * Usage: route_library FATBIN KERNEL [preserve] */
#include <string.h>

#include <tests/programs/program_io.h>

typedef struct {
  int magic;
  int version;
  const unsigned long long* data;
  void* filename_or_fatbins;
} fatbin_wrapper;

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) return 2;
  size_t size = 0;
  char* bytes = read_image(argv[1], &size);
  if (bytes == NULL) return 3;
  /* The container is 8-byte aligned in a program's .nv_fatbin section. */
  unsigned long long* aligned = malloc(size + 8);
  if (aligned == NULL) return 4;
  memcpy(aligned, bytes, size);
  fatbin_wrapper wrapper = {0x466243B1, 1, aligned, NULL};
  print_result("cuInit", cuInit(0));
  CUlibraryOption options[] = {CU_LIBRARY_BINARY_IS_PRESERVED};
  void* values[] = {(void*)(size_t)1};
  const int preserve = argc == 4 && strcmp(argv[3], "preserve") == 0;
  CUlibrary library = NULL;
  print_result("cuLibraryLoadData", cuLibraryLoadData(&library, &wrapper, NULL, NULL, 0, preserve ? options : NULL,
                                                      preserve ? values : NULL, preserve ? 1 : 0));
  CUkernel kernel = NULL;
  print_result(argv[2], library != NULL ? cuLibraryGetKernel(&kernel, library, argv[2]) : CUDA_ERROR_INVALID_HANDLE);
  CUfunction function = NULL;
  print_result("cuKernelGetFunction",
               kernel != NULL ? cuKernelGetFunction(&function, kernel) : CUDA_ERROR_INVALID_HANDLE);
  if (library != NULL) print_result("cuLibraryUnload", cuLibraryUnload(library));
  free(aligned);
  free(bytes);
  return 0;
}
