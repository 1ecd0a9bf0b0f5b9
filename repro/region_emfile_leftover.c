/* repro: pfutex_region_open(name, size, O_RDWR|O_CREAT|O_EXCL) that fails
 * with EMFILE (64 regions already open in this process) has created the shm
 * object "name" (a complete region) and leaves it behind: a retry after
 * closing a region then fails with EEXIST.  shm_open(3)'s O_CREAT creates
 * nothing when it fails.
 * Build (from a configured build dir _b):
 *   cc -I../include -o /tmp/emfile_leftover ../repro/region_emfile_leftover.c \
 *      .libs/libpfutex_core.a -pthread -lrt
 * Run: PFUTEX_BACKEND=emu:futex /tmp/emfile_leftover   (any backend)
 * Expected: "no object left"; got: "LEFT BEHIND" and the retry's EEXIST. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "pfutex.h"

int
main(void)
{
  pfutex_region_t *r[64], *x;
  char name[64];
  int i, fd;
  snprintf(name, sizeof name, "/pft-repro-emfile-%d", (int)getpid());
  for (i = 0; i < 64; i++)
    if (!(r[i] = pfutex_region_anon(4096)))
      return perror("anon"), 2;
  x = pfutex_region_open(name, 4096, O_RDWR | O_CREAT | O_EXCL, 0600);
  printf("65th open: %s (%s)\n", x ? "ok" : "failed", x ? "-" : strerror(errno));
  fd = shm_open(name, O_RDWR, 0);
  printf("%s\n", fd >= 0 ? "LEFT BEHIND: the shm object exists" : "no object left");
  pfutex_region_close(r[0]);
  x = pfutex_region_open(name, 4096, O_RDWR | O_CREAT | O_EXCL, 0600);
  printf("retry after a close: %s (%s)\n", x ? "ok" : "failed", x ? "-" : strerror(errno));
  shm_unlink(name);
  return fd >= 0;
}
