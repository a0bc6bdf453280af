/* A program that loads a module, forks, and loads it again in both processes at the same time
 * (the child prints first, the parent after waiting for it, so the output is the same on every run).
 * Usage: route_fork IMAGE KERNEL */
#include <sys/wait.h>
#include <unistd.h>

#include <tests/programs/program_io.h>

/* One load; the line is built now and printed when the caller says, so that the parent can load
 * while the child does (both on the connection the parent had pooled before the fork, unless the
 * cache takes care) and still print after it. */
static void load_once(const char* who, const char* image, const char* kernel, char* line, size_t size) {
  CUmodule module = NULL;
  CUresult result = cuModuleLoadData(&module, image);
  CUfunction function = NULL;
  CUresult found = module != NULL ? cuModuleGetFunction(&function, module, kernel) : CUDA_ERROR_INVALID_HANDLE;
  snprintf(line, size, "%s: load %d, %s %d\n", who, (int)result, kernel, (int)found);
  if (module != NULL) cuModuleUnload(module);
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  char* image = read_image(argv[1], NULL);
  if (image == NULL) return 3;
  if (cuInit(0) != CUDA_SUCCESS) return 4;
  char line[256];
  load_once("before fork", image, argv[2], line, sizeof(line));
  fputs(line, stdout);
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) return 5;
  if (child == 0) {
    load_once("child", image, argv[2], line, sizeof(line));
    fputs(line, stdout);
    fflush(stdout);
    _exit(0);
  }
  load_once("parent", image, argv[2], line, sizeof(line));
  int status = 0;
  waitpid(child, &status, 0);
  fputs(line, stdout);
  free(image);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 6;
}
