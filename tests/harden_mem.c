/* harden_mem: bad pointers get Linux's EFAULT, never a signal; and the
 * library stays loaded across dlclose.
 *   1. a timeout pointer to a no-access page or an unmapped one: EFAULT on
 *      every backend (native included: the front ends used to read it);
 *   2. WAKE_OP on a read-only uaddr2 (clean call with nr_wake2 0, and the
 *      multiplexer): EFAULT, and the buckets still work afterwards;
 *   3. a shared wait on a read-only private anonymous page: EFAULT;
 *   4. dlclose: the library stays loaded (-z nodelete).
 * Each dangerous call runs in a child: a signal death is a failure. */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork(), dlopen and POSIX memory protection faults (SIGSEGV in a child)");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pft.h"

#define WAIT 0
#define WAKE 1
#define WAKE_OP 5
#define WAIT_BITSET 9
#define PRIV 128
#define REALTIME 256

typedef long (*call_fn)(void *arg);

/* Run fn in a child: its result as -errno or the value, or a death. */
static void
expect_efault(call_fn fn, void *arg, const char *what)
{
  int fds[2], status;
  long res = 12345;
  pid_t pid;
  if (pipe(fds) != 0)
    sysbail("pipe");
  pid = fork();
  if (pid == 0) {
    long r;
    errno = 0;
    r = fn(arg);
    if (r == -1)
      r = -errno;
    if (write(fds[1], &r, sizeof r) != sizeof r)
      _exit(2);
    _exit(0);
  }
  close(fds[1]);
  if (read(fds[0], &res, sizeof res) != sizeof res)
    res = 12345;
  close(fds[0]);
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status))
    ok(0, "%s: -1/EFAULT (died of signal %d)", what, WTERMSIG(status));
  else
    ok(res == -EFAULT, "%s: -1/EFAULT (got %ld)", what, res);
}

static char *noaccess, *unmapped, *readonly;
static uint32_t word;

static long c_wait_rel(void *p) { return pfutex(&word, WAIT | PRIV, 0, p, NULL, 0); }
static long c_wait_rel_shared(void *p) { return pfutex(&word, WAIT, 0, p, NULL, 0); }
static long c_wait_abs(void *p) { return pfutex(&word, WAIT_BITSET | PRIV, 0, p, NULL, ~0u); }
static long c_wait_abs_rt(void *p) { return pfutex(&word, WAIT_BITSET | PRIV | REALTIME, 0, p, NULL, ~0u); }
static long c_wait_abs_mask0(void *p) { return pfutex(&word, WAIT_BITSET | PRIV, 0, p, NULL, 0); }
static long c_wait_mismatch(void *p) { return pfutex(&word, WAIT | PRIV, 7, p, NULL, 0); }
static long c_clean_mono(void *p) { return pfutex_wait(&word, 0, ~0u, PFUTEX_PRIVATE, p, PFUTEX_CLOCK_MONOTONIC); }
static long c_clean_rt(void *p) { return pfutex_wait(&word, 0, ~0u, PFUTEX_PRIVATE, p, PFUTEX_CLOCK_REALTIME); }
static long c_clean_mask0(void *p) { return pfutex_wait(&word, 0, 0, PFUTEX_PRIVATE, p, PFUTEX_CLOCK_MONOTONIC); }

static long
c_wakeop_clean(void *p)
{
  return pfutex_wake_op(&word, p, 1, 0, PFUTEX_OP(PFUTEX_OP_ADD, 1, PFUTEX_OP_CMP_EQ, 0), PFUTEX_PRIVATE);
}
static long
c_wakeop_clean2(void *p)
{
  return pfutex_wake_op(&word, p, 1, 1, PFUTEX_OP(PFUTEX_OP_ADD, 1, PFUTEX_OP_CMP_EQ, 0), PFUTEX_PRIVATE);
}
static long
c_wakeop_legacy(void *p)
{
  long r = pfutex(&word, WAKE_OP | PRIV, 1, (const struct timespec *)(uintptr_t)1, p,
                  PFUTEX_OP(PFUTEX_OP_ADD, 1, PFUTEX_OP_CMP_EQ, 0));
  if (r == -1) {
    /* the library still works on those buckets: no lock left held */
    int e = errno;
    if (pfutex(&word, WAKE | PRIV, 1, NULL, NULL, 0) != 0)
      return -2;
    errno = e;
  }
  return r;
}
static long
c_shared_wait_ro(void *p)
{
  struct timespec rel = { 0, 100000000 };
  return pfutex((uint32_t *)p, WAIT, 0, &rel, NULL, 0);
}

typedef long (*pfutex_fn)(uint32_t *, int, uint32_t, const struct timespec *, uint32_t *, uint32_t);
static pfutex_fn dl_pfutex;
static volatile int dl_stage;

/* Parks once in the dlopen'd copy (so it sets up its per-thread state and
 * key destructor), then exits only after the dlclose. */
static void *
dl_thread(void *arg)
{
  static uint32_t w;
  struct timespec rel = { 0, 2000000 };
  (void)arg;
  dl_pfutex(&w, WAIT | PRIV, 0, &rel, NULL, 0);
  __atomic_store_n(&dl_stage, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(&dl_stage, __ATOMIC_SEQ_CST) != 2)
    sched_yield();
  return NULL;
}

static void *
nop_thread(void *arg)
{
  return arg;
}

static void
case_dlclose(void)
{
  const char *top = getenv("PFUTEX_TOP_BUILDDIR");
  char path[4096];
  void *h, *h2;
  const char *(*backend)(void);
  const char *want = getenv("PFUTEX_BACKEND");
  if (!top) {
    skip("PFUTEX_TOP_BUILDDIR not set (run through make check)");
    skip("dlclose");
    return;
  }
  snprintf(path, sizeof path, "%s/.libs/libpfutex.so.0", top);
  if (access(path, R_OK) != 0) {
    skip("no shared library built (%s)", path);
    skip("dlclose");
    return;
  }
  h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    skip("dlopen: %s", dlerror());
    skip("dlclose");
    return;
  }
  backend = (const char *(*)(void))dlsym(h, "pfutex_backend");
  dl_pfutex = (pfutex_fn)dlsym(h, "pfutex");
  {
    const char *got = backend ? backend() : NULL;
    ok(got && want && strncmp(got, want, strlen(want)) == 0, "dlopen'd library runs backend %s", got ? got : "(null)");
  }
  {
    pthread_t t;
    int i;
    if (!dl_pfutex || pthread_create(&t, NULL, dl_thread, NULL) != 0)
      bail("dlsym/pthread_create");
    while (__atomic_load_n(&dl_stage, __ATOMIC_SEQ_CST) != 1)
      sched_yield();
    dlclose(h);
    __atomic_store_n(&dl_stage, 2, __ATOMIC_SEQ_CST);
    pthread_join(t, NULL);           /* its key destructors run now */
    for (i = 0; i < 4; i++) {
      if (pthread_create(&t, NULL, nop_thread, NULL) != 0)
        bail("pthread_create");
      pthread_join(t, NULL);
    }
  }
  h2 = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  ok(h2 != NULL, "a thread that waited exited after dlclose, and the library is still loaded (-z nodelete)");
  if (h2)
    dlclose(h2);
}

int
main(void)
{
  long pg = sysconf(_SC_PAGESIZE);
  char *m;
  plan(9 * 3 + 3 + 1 + 2);
  m = mmap(NULL, (size_t)pg * 3, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    sysbail("mmap");
  noaccess = m;
  readonly = m + pg;
  unmapped = m + 2 * pg;
  mprotect(noaccess, (size_t)pg, PROT_NONE);
  mprotect(readonly, (size_t)pg, PROT_READ);
  munmap(unmapped, (size_t)pg);
  {
    static const struct { call_fn fn; const char *name; } calls[] = {
      { c_wait_rel, "FUTEX_WAIT" }, { c_wait_rel_shared, "FUTEX_WAIT shared" },
      { c_wait_abs, "WAIT_BITSET" }, { c_wait_abs_rt, "WAIT_BITSET|CLOCK_REALTIME" },
      { c_wait_abs_mask0, "WAIT_BITSET, bitset 0 (the timeout is checked first)" },
      { c_wait_mismatch, "FUTEX_WAIT, mismatched value (the timeout is checked first)" },
      { c_clean_mono, "pfutex_wait monotonic" }, { c_clean_rt, "pfutex_wait realtime" },
      { c_clean_mask0, "pfutex_wait, mask 0 (the deadline is checked first)" },
    };
    size_t i;
    for (i = 0; i < sizeof calls / sizeof calls[0]; i++) {
      char what[160];
      snprintf(what, sizeof what, "%s, timeout on a PROT_NONE page", calls[i].name);
      expect_efault(calls[i].fn, noaccess, what);
      snprintf(what, sizeof what, "%s, timeout on an unmapped page", calls[i].name);
      expect_efault(calls[i].fn, unmapped, what);
      snprintf(what, sizeof what, "%s, timeout starting in a PROT_NONE page, ending in the next", calls[i].name);
      expect_efault(calls[i].fn, readonly - 4, what);
    }
  }
  expect_efault(c_wakeop_clean, readonly, "pfutex_wake_op nr_wake2 0, read-only uaddr2");
  expect_efault(c_wakeop_clean2, readonly, "pfutex_wake_op nr_wake2 1, read-only uaddr2");
  expect_efault(c_wakeop_legacy, readonly, "FUTEX_WAKE_OP, read-only uaddr2 (buckets still work)");
  expect_efault(c_shared_wait_ro, readonly, "shared FUTEX_WAIT on a read-only private anonymous page");
  case_dlclose();
  return 0;
}
#endif /* !_WIN32 */
