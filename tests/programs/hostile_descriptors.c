/* Programs that do to their descriptors what real programs do (docs/transparent.md "Descriptors"):
 *   reused_fds PTX KERNEL DATA    load (a connection to the daemon is pooled), close every descriptor
 *                                 from 3 up as daemons do, open DATA on every number 3..511, load a new
 *                                 module (a miss), write a line through fd 3, close 3..511 and count the
 *                                 closes that failed, print DATA's content
 *   fork_closes PTX KERNEL DATA   load, fork; the child does what reused_fds does after its first load
 *   closed_std PTX KERNEL DATA    close 0-2, load a miss, open DATA and write into it which number it got
 *   tiny_rlimit PTX KERNEL        RLIMIT_NOFILE 16, load a miss, count the files it can still open */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tests/programs/hostile_common.h>

enum { k_last_number = 511 };

static void print_file(const char* path) {
  size_t size = 0;
  char* text = read_image(path, &size);
  printf("%s holds %zu bytes: %s", path, size, text != NULL ? text : "(unreadable)\n");
  free(text);
}

/* The part after a first load: close everything, reuse every number, load again, write, close. */
static int reuse_every_number(const char* base, const char* kernel, const char* data, int variant) {
  for (int fd = 3; fd < 1024; ++fd) close(fd);
  int file = open(data, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (file != 3) return 10;
  for (int n = 4; n <= k_last_number; ++n) {
    if (dup2(file, n) != n) return 11;
  }
  char* ptx = ptx_variant(base, variant);
  print_result("load after reuse", load_and_unload(ptx, kernel));
  free(ptx);
  const char line[] = "program data\n";
  printf("write: %s\n", write(3, line, sizeof line - 1) == (ssize_t)(sizeof line - 1) ? "ok" : strerror(errno));
  int failed_closes = 0;
  for (int n = 3; n <= k_last_number; ++n) failed_closes += close(n) != 0;
  printf("failed closes: %d\n", failed_closes);
  print_file(data);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  const char* mode = argv[1];
  char* base = read_image(argv[2], NULL);
  const char* kernel = argv[3];
  if (base == NULL || !start_driver()) return 3;
  setvbuf(stdout, NULL, _IONBF, 0);
  if (strcmp(mode, "reused_fds") == 0 && argc == 5) {
    print_result("first load", load_and_unload(base, kernel));
    return reuse_every_number(base, kernel, argv[4], 1);
  }
  if (strcmp(mode, "fork_closes") == 0 && argc == 5) {
    print_result("first load", load_and_unload(base, kernel));
    pid_t child = fork();
    if (child == 0) _exit(reuse_every_number(base, kernel, argv[4], 2));
    int status = 0;
    waitpid(child, &status, 0);
    print_result("parent load", load_and_unload(base, kernel));
    printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return 0;
  }
  if (strcmp(mode, "closed_std") == 0 && argc == 5) {
    close(0);
    close(1);
    close(2);
    char* ptx = ptx_variant(base, 3);
    CUresult result = load_and_unload(ptx, kernel);
    int file = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char line[128];
    int length = snprintf(line, sizeof line, "load %d, the data file is fd %d\n", (int)result, file);
    if (file >= 0 && write(file, line, (size_t)length) != length) return 4;
    return 0;
  }
  if (strcmp(mode, "tiny_rlimit") == 0) {
    struct rlimit limit = {16, 16};
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return 4;
    char* ptx = ptx_variant(base, 4);
    print_result("load", load_and_unload(ptx, kernel));
    int opened = 0;
    while (open("/dev/null", O_RDONLY) >= 0) ++opened;
    printf("files opened after the load: %d (%s)\n", opened, strerror(errno));
    return 0;
  }
  return 2;
}
