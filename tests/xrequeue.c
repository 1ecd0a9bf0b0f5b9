/* xrequeue: a requeue between words the emulation keeps in different
 * tables moves the waiters as Linux's does (src/requeue.c, wait.c (M)),
 * for waiters of the calling process.  The words: two anonymous regions'
 * (R1, R2), a word of private memory waited on with a shared op (P: this
 * process's table), a MAP_SHARED | MAP_ANONYMOUS mapping's (S: the user's
 * shared table).  For each ordered pair of kinds:
 *   1. three waiters; FUTEX_REQUEUE 1 + INT_MAX returns 3; the source has
 *      nobody left, the target two, and every waiter returns 0;
 *   2. two timed waiters moved (CMP_REQUEUE 0 + 2), then timing out: both
 *      ETIMEDOUT, neither word has a waiter left (a node left queued would
 *      be counted by these wakes);
 *   3. one waiter moved there and straight back (a second move, most
 *      often before the waiter took the first new node): a wake of the
 *      source finds it, the target has nobody;
 *   4. a WAIT_BITSET waiter (bit 2) moved: a wake of bit 1 on the target
 *      finds nobody, a wake of bit 2 finds it.
 * Cases 1-3 again with the waiters in futex_waitv: entry 1 the moved
 * word, entry 0 a word nobody wakes, of a third kind (so the member moves
 * to a table where its waitv has a parker, or none yet: src/waitv.c
 * (M)), or of private memory when the moved word is (a waitv parked in
 * no shared table); every woken waitv returns 1.
 * The native backend is the reference and runs the same checks.  Waiters
 * of other processes are xrequeue_proc's. */
#ifdef _WIN32
#include "basic.h"
int
main(void)
{
  skip_all("Windows: a MAP_SHARED mapping's shared ops answer ENOSYS there (README)");
  return 0;
}
#else
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <string.h>
#include <sys/mman.h>
#include "pft.h"

enum { K_R1, K_R2, K_P, K_S, K_N };
static const char *const kname[K_N] = { "region 1", "region 2", "private memory", "MAP_SHARED" };
static uint32_t *base[K_N];
static uint32_t priv[4096];

/* Word i of kind k: each case uses its own words (distinct keys). */
static uint32_t *
word(int k, int i)
{
  return base[k] + 16 * i;
}

static void
waiters(struct pft_waiter *w, int n, uint32_t *u, uint32_t bitset, const struct timespec *ts)
{
  int i;
  memset(w, 0, n * sizeof *w);
  for (i = 0; i < n; i++) {
    w[i].uaddr = u;
    w[i].val = *u;
    w[i].bitset = bitset;
    w[i].op_flags = 0;                  /* shared */
    w[i].timeout = ts;
    pft_waiter_start(&w[i]);
  }
}

static int
joined(struct pft_waiter *w, int n, long ret, int err)
{
  int i, good = 0;
  for (i = 0; i < n; i++) {
    pft_waiter_join(&w[i]);
    good += w[i].ret == ret && (ret != -1 || w[i].err == err);
  }
  return good;
}

/* Case 3's moves: the one waiter of a moved to b and straight back, then
 * woken from a (2 checks). */
static void
there_and_back(uint32_t *a, uint32_t *b, const char *what)
{
  long r = pfutex(a, 3, 0, (const struct timespec *)(uintptr_t)1, b, 0);
  r = r * 10 + pfutex(b, 3, 0, (const struct timespec *)(uintptr_t)1, a, 0);
  is_int(11, r, "%s: moved there and back (1, 1)", what);
  r = pfutex(b, 1, INT_MAX, NULL, NULL, 0) * 10;
  r += pfutex(a, 1, INT_MAX, NULL, NULL, 0);
  is_int(1, r, "%s: the source's wake finds it, the target's nobody", what);
}

/* 12 checks per pair. */
static void
pair(int ks, int kd, int slot)
{
  struct pft_waiter w[3];
  struct timespec rel = { 0, 600 * 1000 * 1000 };   /* long enough for a loaded machine: the requeue must come first */
  uint32_t *a = word(ks, slot), *b = word(kd, slot + 1);
  char what[96];
  long r;

  snprintf(what, sizeof what, "%s -> %s", kname[ks], kname[kd]);
  *a = 0;
  *b = 0;

  /* 1 */
  waiters(w, 3, a, 0, NULL);
  PFT_IS(pfutex(a, 3, 1, (const struct timespec *)(uintptr_t)INT_MAX, b, 0), 3, 0, what);
  is_int(0, pfutex(a, 1, INT_MAX, NULL, NULL, 0), "%s: nobody left on the source", what);
  is_int(2, pfutex(b, 1, INT_MAX, NULL, NULL, 0), "%s: two moved to the target", what);
  is_int(3, joined(w, 3, 0, 0), "%s: all three returned 0", what);

  /* 2 */
  waiters(w, 2, a, 0, &rel);
  PFT_IS(pfutex_cmp_requeue(a, *a, b, 0, 2, 0), 2, 0, what);
  is_int(2, joined(w, 2, -1, ETIMEDOUT), "%s: both moved timed waiters timed out", what);
  r = pfutex(a, 1, INT_MAX, NULL, NULL, 0) + pfutex(b, 1, INT_MAX, NULL, NULL, 0);
  is_int(0, r, "%s: and left no node on either word", what);

  /* 3 */
  waiters(w, 1, a, 0, NULL);
  there_and_back(a, b, what);
  is_int(1, joined(w, 1, 0, 0), "%s: it returned 0", what);

  /* 4 */
  waiters(w, 1, a, 2, NULL);
  r = pfutex_requeue(a, b, 0, 1, 0);
  r = r * 10 + pfutex_wake(b, 1, INT_MAX, 0);
  r = r * 10 + pfutex_wake(b, 2, INT_MAX, 0);
  is_int(101, r, "%s: bitset kept (moved 1, bit 1 wakes 0, bit 2 wakes 1)", what);
  is_int(1, joined(w, 1, 0, 0), "%s: the bitset waiter returned 0", what);
}

/* ---- The same with waiters in futex_waitv --------------------------------------- */
struct vxw {
  pthread_t th;
  uint32_t *u, *q;
  long timeout_ms;
  volatile int done;
  long ret;
  int err;
};

static void *
vx_main(void *arg)
{
  struct vxw *v = arg;
  struct pfutex_waitv e[2];
  struct timespec dl;
  memset(e, 0, sizeof e);
  e[0].uaddr = (uintptr_t)v->q;
  e[1].uaddr = (uintptr_t)v->u;
  e[0].flags = e[1].flags = PFUTEX2_SIZE_U32;
  clock_gettime(CLOCK_MONOTONIC, &dl);
  pft_timespec_add_ns(&dl, v->timeout_ms * 1000000LL);
  errno = 0;
  v->ret = pfutex_waitv(e, 2, 0, v->timeout_ms ? &dl : NULL, PFUTEX_CLOCK_MONOTONIC);
  v->err = errno;
  __atomic_store_n(&v->done, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

static void
vx_start(struct vxw *v, int n, uint32_t *u, uint32_t *q, long timeout_ms)
{
  int i;
  for (i = 0; i < n; i++) {
    memset(&v[i], 0, sizeof v[i]);
    v[i].u = u;
    v[i].q = q;
    v[i].timeout_ms = timeout_ms;
    if (pthread_create(&v[i].th, NULL, vx_main, &v[i]) != 0)
      sysbail("pthread_create");
  }
  pft_await_queued(u, n);
}

static int
vx_joined(struct vxw *v, int n, long ret, int err)
{
  int i, good = 0;
  for (i = 0; i < n; i++) {
    pthread_join(v[i].th, NULL);
    if (v[i].ret == ret && (ret != -1 || v[i].err == err))
      good++;
    else
      diag("    waitv %d: ret %ld, errno %s", i, v[i].ret, pft_errname(v[i].err));
  }
  return good;
}

/* Cases 1-3 with waitv waiters (entry 1 on the moved word, entry 0 on q):
 * 10 checks per pair. */
static void
vx_pair(int ks, int kd, int kq, int slot)
{
  struct vxw v[3];
  uint32_t *a = word(ks, slot), *b = word(kd, slot + 1), *q = word(kq, 200 + slot);
  char what[128];
  long r;

  snprintf(what, sizeof what, "waitv (%s, %s) -> %s", kname[kq], kname[ks], kname[kd]);
  *a = *b = *q = 0;

  /* 1 */
  vx_start(v, 3, a, q, 0);
  PFT_IS(pfutex(a, 3, 1, (const struct timespec *)(uintptr_t)INT_MAX, b, 0), 3, 0, what);
  is_int(0, pfutex(a, 1, INT_MAX, NULL, NULL, 0), "%s: nobody left on the source", what);
  is_int(2, pfutex(b, 1, INT_MAX, NULL, NULL, 0), "%s: two moved to the target", what);
  is_int(3, vx_joined(v, 3, 1, 0), "%s: all three returned 1", what);

  /* 2 */
  vx_start(v, 2, a, q, 600);
  PFT_IS(pfutex_cmp_requeue(a, *a, b, 0, 2, 0), 2, 0, what);
  is_int(2, vx_joined(v, 2, -1, ETIMEDOUT), "%s: both moved timed waitvs timed out", what);
  r = pfutex(a, 1, INT_MAX, NULL, NULL, 0) + pfutex(b, 1, INT_MAX, NULL, NULL, 0);
  is_int(0, r, "%s: and left no node on either word", what);

  /* 3 */
  vx_start(v, 1, a, q, 0);
  there_and_back(a, b, what);
  is_int(1, vx_joined(v, 1, 1, 0), "%s: it returned 1", what);
}

int
main(void)
{
  pfutex_region_t *r1, *r2;
  int ks, kd, slot = 0;

  plan((12 + 10) * K_N * (K_N - 1));
  pft_watchdog(240);
  diag("backend %s", pfutex_backend() ? pfutex_backend() : "(none)");
  if (!(r1 = pfutex_region_anon(1 << 16)) || !(r2 = pfutex_region_anon(1 << 16)))
    sysbail("pfutex_region_anon");
  base[K_R1] = pfutex_region_addr(r1);
  base[K_R2] = pfutex_region_addr(r2);
  base[K_P] = priv;
  base[K_S] = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (base[K_S] == MAP_FAILED)
    sysbail("mmap");
  for (ks = 0; ks < K_N; ks++)
    for (kd = 0; kd < K_N; kd++)
      if (ks != kd) {
        pair(ks, kd, slot);
        slot += 2;
      }
  if (!pft_have_waitv()) {
    int i;
    for (i = 0; i < 10 * K_N * (K_N - 1); i++)
      skip("futex_waitv answers ENOSYS here (%s)", pfutex_backend());
  }
  for (ks = pft_have_waitv() ? 0 : K_N; ks < K_N; ks++)
    for (kd = 0; kd < K_N; kd++)
      if (ks != kd) {
        /* a third kind; from private memory, private memory too (a waitv
         * that parks in no shared table until it follows the move) */
        int kq = ks == K_P ? K_P : (ks + 2) % K_N == kd ? (ks + 3) % K_N : (ks + 2) % K_N;
        vx_pair(ks, kd, kq, slot);
        slot += 2;
      }
  pfutex_region_close(r1);
  pfutex_region_close(r2);
  return 0;
}
#endif /* !_WIN32 */
