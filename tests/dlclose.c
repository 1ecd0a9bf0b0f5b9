/* dlclose: the shared library, loaded with dlopen and used by a thread, is
 * dlclose'd while that thread is still alive.  libpfutex stays loaded by
 * design (linked -z nodelete: threads that used it keep its key destructor
 * and per-thread records), so the thread exits without crashing, later
 * threads and a forked child come and go, and dlopen(RTLD_NOLOAD) still
 * finds the library afterwards.
 *
 * The library is the BUILT one ($PFUTEX_TOP_BUILDDIR/.libs/libpfutex.so.0,
 * set by `make check`; by hand, found next to this program), called only
 * through dlsym'd pointers: this program's own static copy of the engine
 * (the test helpers link it) is never called.  No shared library (a
 * static-only build): skipped. */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs dlopen/dlclose of the shared library and fork()");
  return 0;
}
#else
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "pft.h"
#include <pfutex/linux.h>

typedef long (*pfutex_fn)(uint32_t *, int, uint32_t, const struct timespec *, uint32_t *, uint32_t);
typedef int (*wait_fn)(uint32_t *, uint32_t, uint32_t, unsigned int, const struct timespec *, int);
typedef int (*wake_fn)(uint32_t *, uint32_t, int, unsigned int);
typedef const char *(*backend_fn)(void);

static pfutex_fn d_pfutex;
static wait_fn d_wait;
static wake_fn d_wake;
static backend_fn d_backend;

static uint32_t wa, wb;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int go;                          /* mu */

struct user {
  volatile pid_t tid;
  volatile int started, waited;
  long r1, r2;
  int e1, e2;
};

/* Waits through the dlopen'd library (a woken wait, a timed-out one), then
 * stays alive, outside the library, until the main thread lets it go. */
static void *
user_main(void *arg)
{
  struct user *u = arg;
  struct timespec rel = { 0, 20 * 1000000L };
  u->tid = pft_gettid();
  __atomic_store_n(&u->started, 1, __ATOMIC_SEQ_CST);
  errno = 0;
  u->r1 = d_wait(&wa, 0, PFUTEX_BITSET_MATCH_ANY, PFUTEX_PRIVATE, NULL, PFUTEX_CLOCK_MONOTONIC);
  u->e1 = errno;
  errno = 0;
  u->r2 = d_pfutex(&wb, FUTEX_WAIT_PRIVATE, 0, &rel, NULL, 0);
  u->e2 = errno;
  __atomic_store_n(&u->waited, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_lock(&mu);
  while (!go)
    pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  return NULL;
}

static void *
plain_main(void *arg)
{
  return arg;
}

int
main(int argc, char **argv)
{
  char path[4096];
  const char *top = getenv("PFUTEX_TOP_BUILDDIR");
  const char *want = getenv("PFUTEX_TEST_EXPECT_BACKEND");
  const char *env = getenv("PFUTEX_BACKEND");
  const char *got;
  void *h, *h2;
  pthread_t t;
  struct user u;
  int i, fine;
  long long end;

  (void)argc;
  if (top && *top) {
    snprintf(path, sizeof path, "%s/.libs/libpfutex.so.0", top);
  } else {
    /* By hand: this program is tests/dlclose in the build tree. */
    const char *slash = strrchr(argv[0], '/');
    int dirlen = slash ? (int)(slash - argv[0]) : 1;
    snprintf(path, sizeof path, "%.*s/../.libs/libpfutex.so.0", dirlen, slash ? argv[0] : ".");
  }
  if (access(path, R_OK) != 0)
    skip_all("no shared library at %s (static-only build?)", path);

  plan(12);
  pft_watchdog(30);

  h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!ok(h != NULL, "dlopen %s", path))
    bail("dlopen: %s", dlerror());
  d_pfutex = (pfutex_fn)dlsym(h, "pfutex");
  d_wait = (wait_fn)dlsym(h, "pfutex_wait");
  d_wake = (wake_fn)dlsym(h, "pfutex_wake");
  d_backend = (backend_fn)dlsym(h, "pfutex_backend");
  if (!ok(d_pfutex && d_wait && d_wake && d_backend, "dlsym pfutex, pfutex_wait, pfutex_wake, pfutex_backend"))
    bail("dlsym: %s", dlerror());

  got = d_backend();
  diag("backend %s (PFUTEX_BACKEND=%s)", got ? got : "(none)", env ? env : "(unset)");
  if (want)
    is_string(want, got, "the library runs the backend the launcher named");
  else if (env && strcmp(env, "linux") == 0)
    ok(got && strncmp(got, "linux:", 6) == 0, "the library runs the backend the launcher named (linux:*)");
  else if (env)
    is_string(env, got, "the library runs the backend PFUTEX_BACKEND names");
  else
    ok(got != NULL, "the library runs a backend");

  /* A thread waits through the library: woken once, then a timeout. */
  memset(&u, 0, sizeof u);
  if (pthread_create(&t, NULL, user_main, &u) != 0)
    sysbail("pthread_create");
  while (!__atomic_load_n(&u.started, __ATOMIC_SEQ_CST))
    sched_yield();
  pft_wait_asleep(u.tid);
  is_int(1, d_wake(&wa, PFUTEX_BITSET_MATCH_ANY, 1, PFUTEX_PRIVATE), "wake through dlsym counts the thread's wait");
  end = pft_now_ns() + 10LL * 1000000000LL;
  while (!__atomic_load_n(&u.waited, __ATOMIC_SEQ_CST) && pft_now_ns() < end)
    usleep(100);
  if (!ok(u.waited && u.r1 == 0, "the woken wait returned 0"))
    diag("    waited %d, returned %ld, errno %d", u.waited, u.r1, u.e1);
  if (!ok(u.waited && u.r2 == -1 && u.e2 == ETIMEDOUT, "the timed wait returned -1/ETIMEDOUT"))
    diag("    waited %d, returned %ld, errno %d", u.waited, u.r2, u.e2);
  if (!u.waited)
    bail("the thread is stuck in the library");

  /* dlclose while that thread is alive; then it exits. */
  is_int(0, dlclose(h), "dlclose");
  pthread_mutex_lock(&mu);
  go = 1;
  pthread_cond_signal(&cv);
  pthread_mutex_unlock(&mu);
  pthread_join(t, NULL);
  ok(1, "the thread that used the library exited after dlclose");

  fine = 1;
  for (i = 0; i < 4; i++) {
    void *res = NULL;
    if (pthread_create(&t, NULL, plain_main, &u) != 0)
      sysbail("pthread_create");
    pthread_join(t, &res);
    fine &= res == &u;
  }
  ok(fine, "threads created after dlclose come and go");

#ifdef PFT_TSAN
  skip("fork: not meaningful under ThreadSanitizer");
#else
  {
    int status = 0;
    pid_t pid = fork();
    if (pid < 0)
      sysbail("fork");
    if (pid == 0)
      exit(0);
    if (waitpid(pid, &status, 0) != pid)
      sysbail("waitpid");
    if (!ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a forked child exits cleanly"))
      diag("    status 0x%x", status);
  }
#endif

  h2 = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (!ok(h2 != NULL, "still loaded after dlclose: dlopen(RTLD_NOLOAD) finds it (-z nodelete)"))
    diag("    %s", dlerror());
  if (h2) {
    wake_fn w2 = (wake_fn)dlsym(h2, "pfutex_wake");
    static uint32_t wc;
    is_int(0, w2 ? w2(&wc, PFUTEX_BITSET_MATCH_ANY, INT_MAX, PFUTEX_PRIVATE) : -2,
           "and it still answers: a wake with nobody waiting returns 0");
    dlclose(h2);
  } else {
    skip("the library is gone");
  }
  return 0;
}
#endif /* !_WIN32 */
