/* Programs whose standard streams are not what a library expects (docs/client-guide.md "Streams"):
 *   closed_pipe PTX KERNEL        stderr is a pipe nobody reads; the program prints nothing and exits 7
 *   reopened PTX KERNEL A B       closes 1 and 2, opens A and B (fd 1 and fd 2: its data files), loads,
 *                                 writes one line into each; the caller reads A and B */
#include <fcntl.h>
#include <unistd.h>

#include <tests/programs/hostile_common.h>

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  char* base = read_image(argv[2], NULL);
  if (base == NULL || !start_driver()) return 3;
  if (strcmp(argv[1], "closed_pipe") == 0) {
    int ends[2];
    if (pipe(ends) != 0 || dup2(ends[1], 2) != 2) return 4;
    close(ends[0]);
    close(ends[1]);
    load_and_unload(base, argv[3]);
    return 7;
  }
  if (strcmp(argv[1], "reopened") == 0 && argc == 6) {
    close(1);
    close(2);
    if (open(argv[4], O_WRONLY | O_CREAT | O_TRUNC, 0644) != 1) return 4;
    if (open(argv[5], O_WRONLY | O_CREAT | O_TRUNC, 0644) != 2) return 5;
    CUresult result = load_and_unload(base, argv[3]);
    char line[64];
    int length = snprintf(line, sizeof line, "data a, load %d\n", (int)result);
    if (write(1, line, (size_t)length) != length) return 6;
    if (write(2, "data b\n", 7) != 7) return 6;
    return 0;
  }
  return 2;
}
