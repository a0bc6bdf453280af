/* A program that loads a module, forks, and loads it again in both processes (each prints its own
 * lines, the child's first, so the output is the same on every run).
 * Usage: route_fork IMAGE KERNEL */
#include <sys/wait.h>
#include <unistd.h>

#include "program_io.h"

static void load_once(const char* who, const char* image, const char* kernel) {
  CUmodule module = NULL;
  CUresult result = cuModuleLoadData(&module, image);
  CUfunction function = NULL;
  CUresult found = module != NULL ? cuModuleGetFunction(&function, module, kernel) : CUDA_ERROR_INVALID_HANDLE;
  printf("%s: load %d, %s %d\n", who, (int)result, kernel, (int)found);
  fflush(stdout);
  if (module != NULL) cuModuleUnload(module);
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  char* image = read_image(argv[1], NULL);
  if (image == NULL) return 3;
  if (cuInit(0) != CUDA_SUCCESS) return 4;
  load_once("before fork", image, argv[2]);
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) return 5;
  if (child == 0) {
    load_once("child", image, argv[2]);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  load_once("parent", image, argv[2]);
  free(image);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 6;
}
