/* The other module entry points, by direct binding: cuModuleLoad of a PTX file by path, and
 * cuModuleLoadFatBinary of a PTX-only fat binary container.
 * Usage: route_module_files PTX_FILE PTX_KERNEL FATBIN FATBIN_KERNEL */
#include <tests/programs/program_io.h>

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  print_result("cuInit", cuInit(0));
  CUmodule from_file = NULL;
  print_result("cuModuleLoad", cuModuleLoad(&from_file, argv[1]));
  CUfunction function = NULL;
  print_result(argv[2],
               from_file != NULL ? cuModuleGetFunction(&function, from_file, argv[2]) : CUDA_ERROR_INVALID_HANDLE);
  CUmodule missing = NULL;
  print_result("cuModuleLoad of a missing file", cuModuleLoad(&missing, "/nonexistent/module.ptx"));
  size_t size = 0;
  char* fatbin = read_image(argv[3], &size);
  if (fatbin == NULL) return 3;
  CUmodule from_fatbin = NULL;
  print_result("cuModuleLoadFatBinary", cuModuleLoadFatBinary(&from_fatbin, fatbin));
  print_result(argv[4],
               from_fatbin != NULL ? cuModuleGetFunction(&function, from_fatbin, argv[4]) : CUDA_ERROR_INVALID_HANDLE);
  free(fatbin);
  return 0;
}
