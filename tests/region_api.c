/* region_api: the region API's contract (include/pfutex.h), on every
 * backend.
 *   - anon, open and attach succeed; pfutex_region_addr is zeroed, writable
 *     memory of pfutex_region_size bytes;
 *   - open: O_CREAT|O_EXCL of an existing name EEXIST; a missing name
 *     without O_CREAT ENOENT; flags other than O_RDWR[|O_CREAT[|O_EXCL]]
 *     EINVAL; size 0 at creation EINVAL; an existing region opened with a
 *     larger size EINVAL, with 0 or a smaller one: it, at its own size;
 *     a failed creation leaves no name behind;
 *   - attributes: buckets not a power of two, or reserved words not 0:
 *     EINVAL (anon, open, attach);
 *   - a shm object that is not a region: EINVAL or ENOTRECOVERABLE; a
 *     region whose header version (offset 4) was changed: EPROTO;
 *   - close: EBUSY while a thread of this process waits on a word of the
 *     region (emulation: the native backend keeps no count of waits, the
 *     check is skipped there), then 0 once it was woken; NULL or a closed
 *     handle EINVAL;
 *   - unlink: the name goes (ENOENT after), open handles keep working;
 *   - attach: misaligned or NULL addr, len beyond the object, a non-file fd
 *     EINVAL;
 *   - 64 regions open at once, one more EMFILE (anon and named), and after
 *     a close one opens again. */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pfutex/linux.h>
#include "pft.h"
#include "region_util.h"

#ifdef _WIN32
/* Windows: regions are named file mappings (ports/win32/os.c); there are no
 * shm objects to make by hand, attach is ENOTSUP (no inode numbers), and a
 * name lives while a process maps it (unlink cannot remove it before). */
# define W32_SKIP(n, why) do { int w32_i_; for (w32_i_ = 0; w32_i_ < (n); w32_i_++) \
                                 skip("Windows: %s", (why)); } while (0)
# define shm_unlink(n) pfutex_region_unlink(n)
#endif

#define NAMES 8
static char names[NAMES][64];   /* unlinked at exit */

static const char *
nm(int i)
{
  return names[i];
}

static void
cleanup(void)
{
  int i;
  for (i = 0; i < NAMES; i++)
    if (names[i][0])
      shm_unlink(names[i]);
}

/* errno of a call returning a pointer: -1 when it succeeded. */
#define PERR(call) (errno = 0, (call) ? -1 : errno)

static int
is_err(int want, int got, const char *what)
{
  if (ok(got == want, "%s: %s", what, pft_errname(want)))
    return 1;
  diag("    got %s", got == -1 ? "success" : pft_errname(got));
  return 0;
}

static int
all_zero(const void *p, size_t n)
{
  const unsigned char *c = p;
  size_t i;
  for (i = 0; i < n; i++)
    if (c[i])
      return 0;
  return 1;
}

/* 3 tests: non-NULL, size, zeroed and writable. */
static void
check_user_area(pfutex_region_t *rg, size_t want, const char *what)
{
  char *p;
  size_t n;
  if (!ok(rg != NULL, "%s succeeds", what)) {
    diag("    errno %s", pft_errname(errno));
    skip("no region");
    skip("no region");
    return;
  }
  p = pfutex_region_addr(rg);
  n = pfutex_region_size(rg);
  if (!ok(p != NULL && n == want, "%s: pfutex_region_size is %zu", what, want))
    diag("    addr %p, size %zu", (void *)p, n);
  ok(p && all_zero(p, n), "%s: its %zu bytes are zero", what, n);
  if (p) {
    p[0] = 1;
    p[n - 1] = 2;
    p[0] = p[n - 1] = 0;
  }
}

/* 9 tests. */
static pfutex_region_t *named0;

static void
case_create(void)
{
  pfutex_region_t *rg;
  int fd;
  void *m;

  rg = pfutex_region_anon(10000);
  check_user_area(rg, 10000, "pfutex_region_anon(10000)");
  if (rg)
    pfutex_region_close(rg);

  named0 = pfutex_region_open(nm(0), 10000, O_RDWR | O_CREAT | O_EXCL, 0600);
  check_user_area(named0, 10000, "pfutex_region_open(O_CREAT|O_EXCL, 10000)");

#ifdef _WIN32
  (void)fd; (void)m;
  {
    static uint32_t buf[1024];
    is_err(ENOTSUP, PERR(pfutex_region_attach(0, buf, sizeof buf)),
           "pfutex_region_attach: ENOTSUP on Windows (no inode numbers to name its table)");
    W32_SKIP(2, "no attach");
  }
#else
  if ((fd = shm_open(nm(1), O_RDWR | O_CREAT | O_EXCL, 0600)) < 0)
    sysbail("shm_open");
  if (ftruncate(fd, 8192) != 0)
    sysbail("ftruncate");
  m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED)
    sysbail("mmap");
  rg = pfutex_region_attach(fd, m, 8192);
  check_user_area(rg, 8192, "pfutex_region_attach(8192)");
  if (rg) {
    if (pfutex_region_addr(rg) != m)
      diag("attach: addr %p, the mapping %p", pfutex_region_addr(rg), m);
    pfutex_region_close(rg);
  }
  pfutex_region_attach_unlink(fd);
  munmap(m, 8192);
  close(fd);
  shm_unlink(nm(1));
#endif
}

/* 17 tests. */
static void
case_open_errors(void)
{
  pfutex_region_t *rg;

  is_err(EEXIST, PERR(pfutex_region_open(nm(0), 10000, O_RDWR | O_CREAT | O_EXCL, 0600)),
         "O_CREAT|O_EXCL of an existing region");
  is_err(ENOENT, PERR(pfutex_region_open(nm(2), 4096, O_RDWR, 0)), "a missing name without O_CREAT");
  is_err(EINVAL, PERR(pfutex_region_open(nm(0), 0, O_RDONLY, 0)), "O_RDONLY");
  is_err(EINVAL, PERR(pfutex_region_open(nm(0), 0, O_WRONLY, 0)), "O_WRONLY");
  is_err(EINVAL, PERR(pfutex_region_open(nm(0), 0, O_RDWR | O_TRUNC, 0)), "O_RDWR|O_TRUNC");
  is_err(EINVAL, PERR(pfutex_region_open(nm(2), 4096, O_RDONLY | O_CREAT, 0600)),
         "O_RDONLY|O_CREAT of a new name");
  is_err(EINVAL, PERR(pfutex_region_open(nm(2), 0, O_RDWR | O_CREAT, 0600)), "size 0 at creation");
  is_err(EINVAL, PERR(pfutex_region_anon(0)), "pfutex_region_anon(0)");
  is_err(EINVAL, PERR(pfutex_region_open(NULL, 4096, O_RDWR | O_CREAT, 0600)), "a NULL name");
  is_err(ENOENT, PERR(pfutex_region_open(nm(2), 0, O_RDWR, 0)),
         "after those failed creations the name does not exist");

  is_err(EINVAL, PERR(pfutex_region_open(nm(0), 10001, O_RDWR, 0)),
         "opening an existing region with a larger size");
  rg = pfutex_region_open(nm(0), 0, O_RDWR, 0);
  ok(rg && pfutex_region_size(rg) == 10000, "opening it with size 0: its own size, 10000");
  if (rg)
    pfutex_region_close(rg);
  rg = pfutex_region_open(nm(0), 5000, O_RDWR, 0);
  ok(rg && pfutex_region_size(rg) == 10000, "opening it with a smaller size (5000): size 10000");
  if (rg) {
    /* the same memory as the first handle's */
    ((volatile char *)pfutex_region_addr(named0))[17] = 42;
    ok(((volatile char *)pfutex_region_addr(rg))[17] == 42, "the same memory as the first handle");
    ((volatile char *)pfutex_region_addr(named0))[17] = 0;
    pfutex_region_close(rg);
  } else {
    skip("no handle");
  }
  rg = pfutex_region_open(nm(0), 10000, O_RDWR | O_CREAT, 0600);
  ok(rg && pfutex_region_size(rg) == 10000, "O_CREAT without O_EXCL (size 10000) opens the existing region");
  if (rg)
    pfutex_region_close(rg);
  is_err(EINVAL, PERR(pfutex_region_open(nm(0), 20000, O_RDWR | O_CREAT, 0600)),
         "O_CREAT of an existing region with a larger size");
  rg = pfutex_region_open(nm(2), 100, O_RDWR | O_CREAT, 0600);
  ok(rg && pfutex_region_size(rg) == 100, "O_CREAT without O_EXCL creates a new one (size 100)");
  if (rg)
    pfutex_region_close(rg);
  pfutex_region_unlink(nm(2));
}

/* 8 tests. */
static void
case_attr(void)
{
  pfutex_region_attr_t a;
  pfutex_region_t *rg;
  int fd;
  void *m;

  memset(&a, 0, sizeof a);
  a.buckets = 3;
  is_err(EINVAL, PERR(pfutex_region_anon_attr(4096, &a)), "anon_attr, buckets 3");
  is_err(EINVAL, PERR(pfutex_region_open_attr(nm(3), 4096, O_RDWR | O_CREAT, 0600, &a)),
         "open_attr, buckets 3");
  memset(&a, 0, sizeof a);
  a.reserved[0] = 1;
  is_err(EINVAL, PERR(pfutex_region_anon_attr(4096, &a)), "anon_attr, reserved[0] 1");
  a.reserved[0] = 0;
  a.reserved[4] = 1;
  is_err(EINVAL, PERR(pfutex_region_open_attr(nm(3), 4096, O_RDWR | O_CREAT, 0600, &a)),
         "open_attr, reserved[4] 1");
  is_err(ENOENT, PERR(pfutex_region_open(nm(3), 0, O_RDWR, 0)), "the refused creations left no name");

#ifdef _WIN32
  (void)fd; (void)m;
  W32_SKIP(1, "attach_attr: attach is ENOTSUP");
#else
  if ((fd = shm_open(nm(4), O_RDWR | O_CREAT | O_EXCL, 0600)) < 0)
    sysbail("shm_open");
  if (ftruncate(fd, 4096) != 0)
    sysbail("ftruncate");
  m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED)
    sysbail("mmap");
  memset(&a, 0, sizeof a);
  a.buckets = 6;
  is_err(EINVAL, PERR(pfutex_region_attach_attr(fd, m, 4096, &a)), "attach_attr, buckets 6");
  pfutex_region_attach_unlink(fd);
  munmap(m, 4096);
  close(fd);
  shm_unlink(nm(4));
#endif

  memset(&a, 0, sizeof a);
  a.slots = 4;
  a.buckets = 8;
  a.procs = 4;
  rg = pfutex_region_anon_attr(4096, &a);
  ok(rg && pfutex_region_size(rg) == 4096, "anon_attr with slots 4, buckets 8, procs 4");
  if (rg) {
    uint32_t *w = pfutex_region_addr(rg);
    struct timespec ms = { 0, 1000000 };
    errno = 0;
    ok(pfutex(w, FUTEX_WAIT, 0, &ms, NULL, 0) == -1 && errno == ETIMEDOUT,
       "and a timed wait on its word times out");
    pfutex_region_close(rg);
  } else {
    skip("no region");
  }
}

/* 4 tests. */
static void
case_foreign(void)
{
#ifdef _WIN32
  W32_SKIP(4, "needs a shm object that is no region (shm_open)");
#else
  unsigned char junk[4096];
  pfutex_region_t *rg;
  int fd, e;
  uint32_t *h;

  /* a shm object that is no region: garbage from its first byte */
  if ((fd = shm_open(nm(5), O_RDWR | O_CREAT | O_EXCL, 0600)) < 0)
    sysbail("shm_open");
  memset(junk, 0xa5, sizeof junk);
  if (write(fd, junk, sizeof junk) != (ssize_t)sizeof junk)
    sysbail("write");
  close(fd);
  e = PERR(pfutex_region_open(nm(5), 0, O_RDWR, 0));
  ok(e == EINVAL || e == ENOTRECOVERABLE, "a shm object of garbage: %s (EINVAL or ENOTRECOVERABLE)",
     e == -1 ? "success" : pft_errname(e));
  e = PERR(pfutex_region_open(nm(5), 4096, O_RDWR | O_CREAT, 0600));
  ok(e == EINVAL || e == ENOTRECOVERABLE, "the same with O_CREAT: %s", e == -1 ? "success" : pft_errname(e));
  shm_unlink(nm(5));

  /* a region whose layout version was changed */
  if (!(rg = pfutex_region_open(nm(6), 4096, O_RDWR | O_CREAT | O_EXCL, 0600)))
    sysbail("pfutex_region_open");
  pfutex_region_close(rg);
  if ((fd = shm_open(nm(6), O_RDWR, 0)) < 0)
    sysbail("shm_open");
  h = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (h == MAP_FAILED)
    sysbail("mmap");
  close(fd);
  h[1] += 1;
  is_err(EPROTO, PERR(pfutex_region_open(nm(6), 0, O_RDWR, 0)), "a region whose header version was changed");
  h[1] -= 1;
  rg = pfutex_region_open(nm(6), 0, O_RDWR, 0);
  ok(rg != NULL, "with the version restored it opens again");
  if (rg)
    pfutex_region_close(rg);
  munmap(h, 4096);
  pfutex_region_unlink(nm(6));
#endif
}

/* 6 tests. */
static void
case_close(void)
{
  pfutex_region_t *rg = pfutex_region_anon(4096);
  struct pft_waiter w;
  int r, e;

  if (!rg)
    sysbail("pfutex_region_anon");
  memset(&w, 0, sizeof w);
  w.uaddr = pfutex_region_addr(rg);
  w.val = 0;
  w.op_flags = 0;                         /* shared: the region's futex */
  pft_waiter_start(&w);
  if (ru_backend_is_linux()) {
    skip("EBUSY: the native backend keeps no count of waits (the kernel keys the memory)");
  } else {
    errno = 0;
    r = pfutex_region_close(rg);
    e = errno;
    pft_is_ret(r, e, -1, EBUSY, "pfutex_region_close while a thread waits on its word");
  }
  is_int(1, pfutex(w.uaddr, FUTEX_WAKE, 1, NULL, NULL, 0), "the waiter is still there: a wake finds it");
  is_int(0, pft_waiter_join(&w), "its wait returned 0");
  PFT_IS(pfutex_region_close(rg), 0, 0, "pfutex_region_close once it was woken");
  PFT_IS(pfutex_region_close(rg), -1, EINVAL, "closing it again");
  PFT_IS(pfutex_region_close(NULL), -1, EINVAL, "pfutex_region_close(NULL)");
}

/* 5 tests. */
static void
case_unlink(void)
{
  volatile uint32_t *p;
  PFT_IS(pfutex_region_unlink(nm(0)), 0, 0, "pfutex_region_unlink of an open region");
#ifdef _WIN32
  W32_SKIP(1, "a region's name lives while a process maps it: unlink cannot remove it");
#else
  is_err(ENOENT, PERR(pfutex_region_open(nm(0), 0, O_RDWR, 0)), "then open without O_CREAT");
#endif
  p = pfutex_region_addr(named0);
  p[5] = 7;
  ok(p[5] == 7 && pfutex((uint32_t *)p + 5, FUTEX_WAKE, 1, NULL, NULL, 0) == 0,
     "the open handle keeps working");
#ifdef _WIN32
  W32_SKIP(1, "a region's name lives while a process maps it: unlink cannot remove it");
#else
  PFT_IS(pfutex_region_unlink(nm(0)), -1, ENOENT, "unlinking it again");
#endif
  PFT_IS(pfutex_region_unlink(NULL), -1, EINVAL, "pfutex_region_unlink(NULL)");
  pfutex_region_close(named0);
}

/* 6 tests. */
static void
case_attach_errors(void)
{
#ifdef _WIN32
  W32_SKIP(6, "pfutex_region_attach is ENOTSUP (no inode numbers)");
#else
  int fd, pfd[2];
  char *m;

  if ((fd = shm_open(nm(7), O_RDWR | O_CREAT | O_EXCL, 0600)) < 0)
    sysbail("shm_open");
  if (ftruncate(fd, 8192) != 0)
    sysbail("ftruncate");
  m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED)
    sysbail("mmap");
  is_err(EINVAL, PERR(pfutex_region_attach(fd, m + 1, 4096)), "attach at a misaligned address");
  is_err(EINVAL, PERR(pfutex_region_attach(fd, m + 2, 4096)), "attach at an address 2 mod 4");
  is_err(EINVAL, PERR(pfutex_region_attach(fd, NULL, 4096)), "attach at NULL");
  is_err(EINVAL, PERR(pfutex_region_attach(fd, m, 8192 + 4096)), "attach of more than the object");
  if (pipe(pfd) != 0)
    sysbail("pipe");
  is_err(EINVAL, PERR(pfutex_region_attach(pfd[0], m, 4096)), "attach of a pipe");
  close(pfd[0]);
  close(pfd[1]);
  is_err(EBADF, PERR(pfutex_region_attach(-1, m, 4096)), "attach of fd -1");
  pfutex_region_attach_unlink(fd);
  munmap(m, 8192);
  close(fd);
  shm_unlink(nm(7));
#endif
}

/* 6 tests. */
static void
case_emfile(void)
{
  pfutex_region_t *rgs[64], *rg;
  int i, n = 0, e;
  char extra[80];

  for (i = 0; i < 64; i++)
    if ((rgs[n] = pfutex_region_anon(4096)) != NULL)
      n++;
    else
      diag("region %d: %s", i, pft_errname(errno));
  is_int(64, n, "64 regions open at once");
  is_err(EMFILE, PERR(pfutex_region_anon(4096)), "a 65th anonymous region");
  snprintf(extra, sizeof extra, "%s-x", nm(2));
  e = PERR(pfutex_region_open(extra, 4096, O_RDWR | O_CREAT | O_EXCL, 0600));
  is_err(EMFILE, e, "a 65th, named");
  {
#ifdef _WIN32
    e = PERR(pfutex_region_open(extra, 0, O_RDWR, 0));
#else
    int fd = shm_open(extra, O_RDWR, 0);
    e = fd < 0 ? errno : -1;
    if (fd >= 0)
      close(fd);
#endif
    is_err(ENOENT, e, "the refused creation left no shm object behind");
  }
  pfutex_region_unlink(extra);
  if (n > 0)
    pfutex_region_close(rgs[--n]);
  rg = pfutex_region_anon(4096);
  ok(rg != NULL, "after one close, one opens again");
  if (rg)
    rgs[n++] = rg;
  e = 0;
  for (i = 0; i < n; i++)
    if (pfutex_region_close(rgs[i]) != 0)
      e++;
  is_int(0, e, "and all 64 close");
}

int
main(void)
{
  int i;
  plan(9 + 17 + 8 + 4 + 6 + 5 + 6 + 6);
  pft_watchdog(60);
  diag("backend %s", pfutex_backend() ? pfutex_backend() : "(none)");
  for (i = 0; i < NAMES; i++) {
    char tag[16];
    snprintf(tag, sizeof tag, "rapi%d", i);
    ru_name(names[i], sizeof names[i], tag);
    shm_unlink(names[i]);
  }
  atexit(cleanup);

  case_create();
  case_open_errors();
  case_attr();
  case_foreign();
  case_close();
  case_unlink();
  case_attach_errors();
  case_emfile();
  return 0;
}
