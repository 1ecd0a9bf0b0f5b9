/* os_generic: src/os_generic.c, the memory answers of the BSD, macOS and
 * other POSIX hosts (no process_vm_readv there), compiled into this test
 * under other names and run here: a timeout copied in from a good pointer
 * arrives intact; from the first page, an unmapped page, a PROT_NONE page
 * or an object straddling into one it is -EFAULT, never a signal; errno is
 * kept; no descriptor is left open after 2000 copies; and a copy made with
 * every descriptor in use still works (the plain-copy fallback). */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#define pf_os_copy_in pf_test_generic_copy_in
#define pf_os_probe_write pf_test_generic_probe_write
#define pf_os_shared_key_check pf_test_generic_shared_key_check
#include "../src/os_generic.c"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "pft.h"

static int
open_fds(void)
{
  int fd, n = 0;
  for (fd = 0; fd < 1024; fd++)
    if (fcntl(fd, F_GETFD) != -1)
      n++;
  return n;
}

int
main(void)
{
  long page = sysconf(_SC_PAGESIZE);
  struct timespec src = { 12, 345678901 }, dst;
  unsigned char *m;
  int i, ret, before, bad = 0;

  plan(11);
  pft_watchdog(60);

  memset(&dst, 0, sizeof dst);
  ret = pf_os_copy_in(&dst, &src, sizeof src);
  ok(ret == 0 && dst.tv_sec == 12 && dst.tv_nsec == 345678901, "a good timeout arrives intact (%d)", ret);
  is_int(-EFAULT, pf_os_copy_in(&dst, (const void *)16, sizeof dst), "the first page: -EFAULT");

  m = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    bail("mmap: %s", strerror(errno));
  memcpy(m + page - sizeof src, &src, sizeof src);
  mprotect(m + page, page, PROT_NONE);
  memset(&dst, 0, sizeof dst);
  ok(pf_os_copy_in(&dst, m + page - sizeof src, sizeof src) == 0 && dst.tv_nsec == 345678901,
     "a timeout ending at a page's last byte arrives intact");
  is_int(-EFAULT, pf_os_copy_in(&dst, m + page, sizeof dst), "a PROT_NONE page: -EFAULT");
  is_int(-EFAULT, pf_os_copy_in(&dst, m + page - 8, sizeof dst), "straddling into a PROT_NONE page: -EFAULT");
  munmap(m + page, page);
  is_int(-EFAULT, pf_os_copy_in(&dst, m + page, sizeof dst), "an unmapped page: -EFAULT");
  errno = 1234;
  pf_os_copy_in(&dst, m + page, sizeof dst);
  is_int(1234, errno, "errno is kept");

  before = open_fds();
  for (i = 0; i < 2000; i++) {
    if (pf_os_copy_in(&dst, i & 1 ? (const void *)(m + page) : (const void *)&src, sizeof dst) != (i & 1 ? -EFAULT : 0))
      bad++;
  }
  is_int(0, bad, "2000 copies, good and bad alternating: every answer right");
  is_int(before, open_fds(), "no descriptor left open after them");

  /* Every descriptor in use: the pipe cannot be made; a good copy still works. */
  {
    struct rlimit rl, low;
    int fds[1024], nfd = 0;
    getrlimit(RLIMIT_NOFILE, &rl);
    low = rl;
    low.rlim_cur = 64;
    setrlimit(RLIMIT_NOFILE, &low);
    while (nfd < 1024 && (fds[nfd] = open("/dev/null", O_RDONLY)) >= 0)
      nfd++;
    memset(&dst, 0, sizeof dst);
    ok(pipe((int[2]){ 0, 0 }) != 0 && pf_os_copy_in(&dst, &src, sizeof src) == 0 && dst.tv_sec == 12,
       "no descriptor left (%d open): a good timeout still arrives (plain copy)", nfd);
    while (nfd > 0)
      close(fds[--nfd]);
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  is_int(0, pf_os_probe_write(&src) | pf_os_shared_key_check(&src), "no write probe, no key check: 0");
  munmap(m, page);
  return 0;
}
