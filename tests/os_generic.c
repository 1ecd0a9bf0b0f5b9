/* os_generic: src/os_generic.c, the memory answers of the BSD, macOS and
 * other POSIX hosts (no process_vm_readv there), compiled into this test
 * under other names and run here: a timeout copied in from a good pointer
 * arrives intact; from the first page, an unmapped page, a PROT_NONE page
 * or an object straddling into one it is -EFAULT, never a signal; errno is
 * kept; no descriptor is left open after 2000 copies; and a copy made with
 * every descriptor in use still works (the plain-copy fallback). */
#ifdef _WIN32
/* Windows: src/os_generic.c is not built (ports/win32/os.c answers
 * src/os.h); this checks those answers instead, through the library's
 * own pf_os_copy_in / pf_os_probe_write / pf_os_shared_key_check: a good
 * copy arrives intact and keeps errno; the first page, a reserved but
 * uncommitted page, a PAGE_NOACCESS page, a guard page and an object
 * straddling into one give -EFAULT, never an exception; a read-only page
 * is readable but fails the write probe. */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include "os.h"
#include <windows.h>
#include "pft.h"

int
main(void)
{
  SYSTEM_INFO si;
  struct timespec src = { 12, 345678901 }, dst;
  unsigned char *m;
  DWORD old;
  size_t pg;
  int e;

  plan(11);
  GetSystemInfo(&si);
  pg = si.dwPageSize;
  /* four pages: committed read-write, read-only, no-access, reserved only */
  m = VirtualAlloc(NULL, 4 * pg, MEM_RESERVE, PAGE_NOACCESS);
  if (!m || !VirtualAlloc(m, 3 * pg, MEM_COMMIT, PAGE_READWRITE))
    bail("VirtualAlloc");
  memcpy(m + pg, &src, sizeof src);
  if (!VirtualProtect(m + pg, pg, PAGE_READONLY, &old) || !VirtualProtect(m + 2 * pg, pg, PAGE_NOACCESS, &old))
    bail("VirtualProtect");

  errno = 1234;
  memset(&dst, 0, sizeof dst);
  e = pf_os_copy_in(&dst, &src, sizeof src);
  ok(e == 0 && dst.tv_sec == 12 && dst.tv_nsec == 345678901, "a good copy arrives intact");
  ok(errno == 1234, "errno is kept");
  memset(&dst, 0, sizeof dst);
  ok(pf_os_copy_in(&dst, m + pg, sizeof dst) == 0 && dst.tv_nsec == 345678901, "a read-only page is read");
  is_int(-EFAULT, pf_os_copy_in(&dst, (void *)(uintptr_t)8, sizeof dst), "the first page: -EFAULT");
  is_int(-EFAULT, pf_os_copy_in(&dst, m + 2 * pg, sizeof dst), "a PAGE_NOACCESS page: -EFAULT");
  is_int(-EFAULT, pf_os_copy_in(&dst, m + 3 * pg, sizeof dst), "a reserved, uncommitted page: -EFAULT");
  is_int(-EFAULT, pf_os_copy_in(&dst, m + 2 * pg - 8, sizeof dst), "an object straddling into a no-access page: -EFAULT");
  is_int(0, pf_os_probe_write(m), "the write probe: a read-write page passes");
  is_int(-EFAULT, pf_os_probe_write(m + pg), "a read-only page fails it");
  is_int(-EFAULT, pf_os_shared_key_check(m + 3 * pg), "shared-key check: an uncommitted page fails");
  is_int(0, pf_os_shared_key_check(m + pg), "a committed read-only page passes");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#define pf_os_copy_in pf_test_generic_copy_in
#define pf_os_probe_write pf_test_generic_probe_write
#define pf_os_shared_key_check pf_test_generic_shared_key_check
#define pf_os_object_id pf_test_generic_object_id
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
  is_int(-EFAULT, pf_os_copy_in(&dst, m + page - sizeof dst / 2, sizeof dst),
         "straddling into a PROT_NONE page (half of the timeout in it): -EFAULT");
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
#endif /* !_WIN32 */
