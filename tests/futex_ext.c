/* futex_ext: the rest of futex (issue 19): futex_waitv(2), the PI ops and
 * robust lists, differential against the kernel.  Each scenario runs
 * twice on fresh memory, once through raw system calls (the reference)
 * and once through pfutex (pfutex_waitv, pfutex() with the PI op numbers,
 * pfutex_set_robust_list); return values, errno and the final words must
 * agree, with thread ids replaced by the role of their thread (the two
 * runs have different threads).
 *
 *   waitv  argument errors (nr 0 and 129, flags, NULL, an entry's size
 *          and reserved field, misaligned, unreadable words and array),
 *          a mismatch (EAGAIN), a past timeout on each clock (ETIMEDOUT),
 *          a bad clock and timeout, and a wake of one word of three: the
 *          index returned and the wake's count;
 *   PI     lock of a free word, EDEADLK (lock and trylock of one's own),
 *          unlock (EPERM when not the owner), trylock of a word another
 *          thread holds, an owner id that is no thread (ESRCH), a timed
 *          lock that times out (LOCK_PI, LOCK_PI2 on each clock), the
 *          hand-off (unlock gives the word to the blocked locker),
 *          WAIT_REQUEUE_PI woken by CMP_REQUEUE_PI (it returns owning the
 *          PI word), and CMP_REQUEUE_PI's argument errors;
 *   robust set/get, a bad length, and a thread that exits holding two
 *          locks (one listed, one as list_op_pending): both get
 *          FUTEX_OWNER_DIED, a waiter is woken.
 *
 * Every backend runs every scenario.  Where the kernel lacks a call (qemu-user has no futex2), the
 * reference's ENOSYS must be pfutex's too on the native backend. */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "pft.h"
#include <pfutex/linux.h>

#if defined(__linux__)
# include <sys/mman.h>
# include <sys/syscall.h>
# include <unistd.h>
# include <sys/wait.h>
#endif

#if !defined(__linux__)
int
main(void)
{
  skip_all("the kernel reference is Linux's");
  return 0;
}
#else

#define TIDM 0x3fffffffu
#define NROLE 4

/* One run: via 0 the kernel, 1 pfutex. */
static int via;
static char *unmapped;       /* a page that is not mapped */

static long
rk(long r)
{
  return r < 0 ? -errno : r;
}

static long
c_futex(uint32_t *u, int op, uint32_t val, const struct timespec *t, uint32_t *u2, uint32_t v3)
{
  errno = 0;
  if (via == 0)
    return rk(syscall(SYS_futex, u, op, val, t, u2, v3));
  return rk(pfutex(u, op, val, t, u2, v3));
}

static long
c_waitv(struct pfutex_waitv *w, unsigned int nr, unsigned int flags, const struct timespec *t,
        int clk)
{
  errno = 0;
  if (via == 0) {
    struct { int64_t tv_sec, tv_nsec; } k;      /* struct __kernel_timespec */
    const void *kt = t;
    if (t && sizeof t->tv_sec < sizeof k.tv_sec && (uintptr_t)t >= 4096
        && (const void *)t != (const void *)unmapped) {   /* (that one faults in the kernel) */
      k.tv_sec = t->tv_sec;
      k.tv_nsec = t->tv_nsec;
      kt = &k;
    }
    return rk(syscall(449, w, nr, flags, kt, clk));
  }
  return rk(pfutex_waitv(w, nr, flags, t, clk));
}

static long
c_set_robust(struct robust_list_head *h, size_t len)
{
  errno = 0;
  if (via == 0)
    return rk(syscall(SYS_set_robust_list, h, len));
  return rk(pfutex_set_robust_list(h, len));
}

static long
c_get_robust(int pid, struct robust_list_head **h, size_t *len)
{
  errno = 0;
  if (via == 0)
    return rk(syscall(SYS_get_robust_list, pid, h, len));
  return rk(pfutex_get_robust_list(pid, h, len));
}

/* ---- Results: what one run saw ------------------------------------------------------------ */
#define NRES 12
struct run {
  long r[NRES];           /* return values (or -errno), in order */
  uint32_t w[NRES];       /* words, tids by role */
  int nr, nw;
};
static struct run runs[2];
static pid_t roles[NROLE];  /* tids of this run's threads, by role */

static void
res(long r)
{
  struct run *x = &runs[via];
  if (x->nr < NRES)
    x->r[x->nr++] = r;
}

/* A word, its owner id replaced by its role (100 + role), or by 99 when
 * it names no thread of the run (the ESRCH case's made-up id stays). */
static void
word(uint32_t v)
{
  struct run *x = &runs[via];
  uint32_t t = v & TIDM, n = t;
  int i;
  if (t) {
    for (i = 0; i < NROLE; i++)
      if (roles[i] && (uint32_t)roles[i] == t)
        break;
    n = i < NROLE ? 100u + (uint32_t)i : t;
  }
  if (x->nw < NRES)
    x->w[x->nw++] = (v & ~TIDM) | n;
}

static char rbuf[2][400];
static const char *
show(int v)
{
  struct run *x = &runs[v];
  char *b = rbuf[v];
  int i, o = 0;
  o += snprintf(b + o, sizeof rbuf[v] - (size_t)o, "ret");
  for (i = 0; i < x->nr; i++)
    o += snprintf(b + o, sizeof rbuf[v] - (size_t)o, " %s",
                  x->r[i] < 0 ? pft_errname((int)-x->r[i]) : (snprintf(b + 300, 20, "%ld", x->r[i]), b + 300));
  o += snprintf(b + o, sizeof rbuf[v] - (size_t)o, "; words");
  for (i = 0; i < x->nw && o < 280; i++)
    o += snprintf(b + o, sizeof rbuf[v] - (size_t)o, " %#x", (unsigned)x->w[i]);
  return b;
}

/* Run fn under both, compare. */
static void
both(const char *name, void (*fn)(void))
{
  char k[400];
  memset(runs, 0, sizeof runs);
  for (via = 0; via < 2; via++) {
    memset(roles, 0, sizeof roles);
    roles[0] = pft_gettid();
    fn();
  }
  snprintf(k, sizeof k, "%s", show(0));
  if (pft_emulator() && pft_backend_is_emu()) {
    /* under qemu-user the reference is the emulator's, which lacks calls
     * (futex2, robust lists) Linux has: no reference where it says ENOSYS */
    int j;
    for (j = 0; j < runs[0].nr; j++)
      if (runs[0].r[j] == -ENOSYS && runs[1].r[j] != -ENOSYS) {
        skip("%s: %s answers ENOSYS to a call Linux has: no reference (%s)", name,
             pft_emulator(), k);
        return;
      }
  }
  if (pft_emulator()
      && !(runs[0].nr == runs[1].nr && runs[0].nw == runs[1].nw
           && memcmp(runs[0].r, runs[1].r, sizeof runs[0].r) == 0
           && memcmp(runs[0].w, runs[1].w, sizeof runs[0].w) == 0)) {
    /* under qemu-user the reference is the emulator's, which differs from
     * Linux in places (futex_waitv's 32-bit timeouts on armhf, PI words at
     * a thread's exit on s390x): no reference; the same scenario runs
     * against the real kernel on x86_64 and i386 */
    skip("%s: %s's answer differs, no reference (kernel: %s; pfutex: %s)", name, pft_emulator(),
         k, show(1));
    return;
  }
  if (!ok(runs[0].nr == runs[1].nr && runs[0].nw == runs[1].nw
              && memcmp(runs[0].r, runs[1].r, sizeof runs[0].r) == 0
              && memcmp(runs[0].w, runs[1].w, sizeof runs[0].w) == 0,
          "%s: as the kernel", name))
    diag("kernel: %s\n# pfutex: %s", k, show(1));
  else
    diag("  %s", k);
}

/* ---- Memory ----------------------------------------------------------------------------- */
static uint32_t *shm;        /* a shared page */

static struct timespec
abs_in(int clk, long long ns)
{
  struct timespec t;
  clock_gettime(clk == PFUTEX_CLOCK_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC, &t);
  pft_timespec_add_ns(&t, ns);
  return t;
}

/* ---- waitv ------------------------------------------------------------------------------- */
static struct pfutex_waitv wv[130];

static void
wv_fill(unsigned int n, unsigned int flags)
{
  unsigned int i;
  memset(wv, 0, sizeof wv);
  for (i = 0; i < n; i++) {
    shm[i % 64] = 0;
    wv[i].uaddr = (uintptr_t)&shm[i % 64];
    wv[i].val = 0;
    wv[i].flags = PFUTEX2_SIZE_U32 | flags;
  }
}

static void
wv_args(void)
{
  struct timespec past = abs_in(PFUTEX_CLOCK_MONOTONIC, -1000000), bad = { 0, 1000000000L };
  wv_fill(3, PFUTEX2_PRIVATE);
  res(c_waitv(wv, 0, 0, &past, CLOCK_MONOTONIC));
  res(c_waitv(wv, 129, 0, &past, CLOCK_MONOTONIC));
  res(c_waitv(wv, 3, 1, &past, CLOCK_MONOTONIC));
  res(c_waitv(NULL, 1, 0, &past, CLOCK_MONOTONIC));
  res(c_waitv((struct pfutex_waitv *)(void *)unmapped, 1, 0, &past, CLOCK_MONOTONIC));
  res(c_waitv(wv, 3, 0, &past, 5));
  res(c_waitv(wv, 3, 0, &bad, CLOCK_MONOTONIC));
  res(c_waitv(wv, 3, 0, (const struct timespec *)(void *)unmapped, CLOCK_MONOTONIC));
}

static void
wv_entries(void)
{
  struct timespec past = abs_in(PFUTEX_CLOCK_MONOTONIC, -1000000);
  wv_fill(3, PFUTEX2_PRIVATE);
  wv[1].flags = 0;                                   /* FUTEX2_SIZE_U8 */
  res(c_waitv(wv, 3, 0, &past, CLOCK_MONOTONIC));
  wv_fill(3, PFUTEX2_PRIVATE);
  wv[2].__reserved = 1;
  res(c_waitv(wv, 3, 0, &past, CLOCK_MONOTONIC));
  wv_fill(3, PFUTEX2_PRIVATE);
  wv[1].flags |= 0x40;                               /* an unknown flag */
  res(c_waitv(wv, 3, 0, &past, CLOCK_MONOTONIC));
  wv_fill(3, PFUTEX2_PRIVATE);
  wv[1].uaddr += 2;
  res(c_waitv(wv, 3, 0, &past, CLOCK_MONOTONIC));
  wv_fill(3, 0);
  wv[2].uaddr = 0;
  res(c_waitv(wv, 3, 0, &past, CLOCK_MONOTONIC));
  wv_fill(3, PFUTEX2_PRIVATE);
  wv[1].flags |= 0x08;                               /* FUTEX2_MPOL: a hint, accepted */
  res(c_waitv(wv, 3, 0, &past, CLOCK_MONOTONIC));
  wv_fill(3, 0);
  wv[0].flags |= 0x08;                               /* shared, MPOL */
  res(c_waitv(wv, 3, 0, &past, CLOCK_MONOTONIC));
}

/* The order of a private entry's errors: Linux reads the values in order,
 * and a private key needs no read, so a private mismatch before an
 * unreadable private word is EAGAIN, a match before it EFAULT; a shared
 * unreadable word is EFAULT whatever comes first (its key reads it). */
static void
wv_order(void)
{
  struct timespec past = abs_in(PFUTEX_CLOCK_MONOTONIC, -1000000);
  wv_fill(2, PFUTEX2_PRIVATE);
  wv[0].val = 7;                                     /* a mismatch */
  wv[1].uaddr = (uintptr_t)unmapped;
  res(c_waitv(wv, 2, 0, &past, CLOCK_MONOTONIC));
  wv_fill(2, PFUTEX2_PRIVATE);
  wv[1].uaddr = (uintptr_t)unmapped;
  res(c_waitv(wv, 2, 0, &past, CLOCK_MONOTONIC));
  wv_fill(2, PFUTEX2_PRIVATE);
  wv[0].val = 7;
  wv[1].flags = PFUTEX2_SIZE_U32;                    /* shared */
  wv[1].uaddr = (uintptr_t)unmapped;
  res(c_waitv(wv, 2, 0, &past, CLOCK_MONOTONIC));
  wv_fill(3, PFUTEX2_PRIVATE);
  wv[1].val = 7;
  wv[2].uaddr = (uintptr_t)unmapped;
  res(c_waitv(wv, 3, 0, &past, CLOCK_MONOTONIC));
}

/* An unmapped private word: the kernel's EFAULT, and the emulation's
 * (its guarded read, ports/posix/guard.c). */
static void
wv_unmapped(void)
{
  struct timespec past = abs_in(PFUTEX_CLOCK_MONOTONIC, -1000000);
  wv_fill(3, PFUTEX2_PRIVATE);
  wv[0].uaddr = (uintptr_t)unmapped;
  res(c_waitv(wv, 3, 0, &past, CLOCK_MONOTONIC));
}

static void
wv_values(void)
{
  struct timespec past = abs_in(PFUTEX_CLOCK_MONOTONIC, -1000000);
  struct timespec rpast = abs_in(PFUTEX_CLOCK_REALTIME, -1000000);
  struct timespec soon = abs_in(PFUTEX_CLOCK_MONOTONIC, 20000000);
  wv_fill(3, PFUTEX2_PRIVATE);
  wv[1].val = 7;                                     /* a mismatch */
  res(c_waitv(wv, 3, 0, NULL, CLOCK_MONOTONIC));
  wv_fill(128, 0);
  wv[127].val = 1;
  res(c_waitv(wv, 128, 0, &past, CLOCK_MONOTONIC));
  wv_fill(128, PFUTEX2_PRIVATE);
  res(c_waitv(wv, 128, 0, &past, CLOCK_MONOTONIC));
  wv_fill(2, 0);
  res(c_waitv(wv, 2, 0, &rpast, CLOCK_REALTIME));
  wv_fill(2, PFUTEX2_PRIVATE);
  res(c_waitv(wv, 2, 0, &soon, CLOCK_MONOTONIC));
  wv[1].val = 0x100000000ull;                        /* the kernel compares 32 bits? */
  res(c_waitv(wv, 2, 0, &past, CLOCK_MONOTONIC));
}

struct wv_arg {
  unsigned int flags;
  volatile long ret;
  volatile pid_t tid;
};

static void *
wv_thread(void *p)
{
  struct wv_arg *a = p;
  struct pfutex_waitv v[3];
  struct timespec t = abs_in(PFUTEX_CLOCK_MONOTONIC, 10LL * 1000000000);
  int i;
  a->tid = pft_gettid();
  for (i = 0; i < 3; i++) {
    v[i].uaddr = (uintptr_t)&shm[10 + i];
    v[i].val = 0;
    v[i].flags = PFUTEX2_SIZE_U32 | a->flags;
    v[i].__reserved = 0;
  }
  errno = 0;
  if (via == 0) {
    struct { int64_t tv_sec, tv_nsec; } k = { t.tv_sec, t.tv_nsec };
    a->ret = rk(syscall(449, v, 3, 0, &k, CLOCK_MONOTONIC));
  } else {
    a->ret = rk(pfutex_waitv(v, 3, 0, &t, CLOCK_MONOTONIC));
  }
  return NULL;
}

static void
wv_wake_one(unsigned int flags)
{
  struct wv_arg a = { flags, 0, 0 };
  pthread_t th;
  int op = FUTEX_WAKE | ((flags & PFUTEX2_PRIVATE) ? FUTEX_PRIVATE_FLAG : 0);
  shm[10] = shm[11] = shm[12] = 0;
  if (pthread_create(&th, NULL, wv_thread, &a) != 0)
    sysbail("pthread_create");
  while (!a.tid)
    usleep(100);
  pft_wait_asleep(a.tid);
  usleep(20000);
  res(c_futex(&shm[11], op, 1, NULL, NULL, 0));      /* the middle word */
  pthread_join(th, NULL);
  res(a.ret);
  res(c_futex(&shm[10], op, 1, NULL, NULL, 0));      /* nobody left on the others */
  res(c_futex(&shm[12], op, 1, NULL, NULL, 0));
}

static void
wv_wake_private(void)
{
  wv_wake_one(PFUTEX2_PRIVATE);
}

static void
wv_wake_shared(void)
{
  wv_wake_one(0);
}

/* ---- PI ------------------------------------------------------------------------------------ */
/* A helper thread that takes the PI word w (LOCK_PI), holds it until told,
 * then unlocks it. */
struct holder {
  uint32_t *w;
  volatile int locked, release, done;
  volatile long lret, uret;
  volatile pid_t tid;
  int op_flags;
};

static void *
holder_thread(void *p)
{
  struct holder *h = p;
  h->tid = pft_gettid();
  h->lret = c_futex(h->w, FUTEX_LOCK_PI | h->op_flags, 0, NULL, NULL, 0);
  h->locked = 1;
  while (!h->release)
    usleep(200);
  h->uret = c_futex(h->w, FUTEX_UNLOCK_PI | h->op_flags, 0, NULL, NULL, 0);
  h->done = 1;
  return NULL;
}

static void
holder_start(struct holder *h, pthread_t *th, uint32_t *w, int role, int op_flags)
{
  memset((void *)h, 0, sizeof *h);
  h->w = w;
  h->op_flags = op_flags;
  if (pthread_create(th, NULL, holder_thread, h) != 0)
    sysbail("pthread_create");
  while (!h->locked)
    usleep(100);
  roles[role] = h->tid;
}

static void
holder_end(struct holder *h, pthread_t th)
{
  h->release = 1;
  pthread_join(th, NULL);
  res(h->lret);
  res(h->uret);
}

static void
pi_self(void)
{
  uint32_t *w = &shm[20];
  *w = 0;
  res(c_futex(w, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0));
  word(*w);
  res(c_futex(w, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0));
  res(c_futex(w, FUTEX_TRYLOCK_PI_PRIVATE, 0, NULL, NULL, 0));
  res(c_futex(w, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0));
  word(*w);
  res(c_futex(w, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0));
  res(c_futex(w, FUTEX_TRYLOCK_PI, 0, NULL, NULL, 0));        /* shared, free */
  word(*w);
  res(c_futex(w, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0));
  word(*w);
}

static void
pi_args(void)
{
  struct timespec bad = { 0, -1 };
  res(c_futex((uint32_t *)(void *)((char *)&shm[21] + 1), FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0));
  res(c_futex(NULL, FUTEX_LOCK_PI, 0, NULL, NULL, 0));
  res(c_futex((uint32_t *)(void *)unmapped, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0));
  shm[21] = 0;
  res(c_futex(&shm[21], FUTEX_LOCK_PI_PRIVATE, 0, &bad, NULL, 0));
  word(shm[21]);
  res(c_futex(&shm[21], FUTEX_LOCK_PI_PRIVATE | FUTEX_CLOCK_REALTIME, 0, NULL, NULL, 0));
  word(shm[21]);
  if (shm[21])
    (void)c_futex(&shm[21], FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0);
  shm[21] = 0x3ffffff0u;                               /* no such thread */
  res(c_futex(&shm[21], FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0));
  word(shm[21]);
  shm[21] = 0;
}

/* UNLOCK_PI reads the word and checks its owner before anything else
 * (Linux's futex_unlock_pi): another's word is EPERM even read-only or
 * misaligned; one's own read-only word is EFAULT, one's own misaligned
 * word EINVAL. */
static uint32_t *ro_word;       /* a read-only page, its words set before mprotect */

static void
pi_unlock_order(void)
{
  uint32_t *mis = (uint32_t *)(void *)((char *)&shm[24] + 1);
  res(c_futex(ro_word, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0));      /* 12345: not ours */
  res(c_futex(ro_word, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0));
  memcpy(mis, &(uint32_t){ 12345 }, 4);
  res(c_futex(mis, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0));
  res(c_futex(mis, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0));
  memcpy(mis, &(uint32_t){ (uint32_t)pft_gettid() }, 4);
  res(c_futex(mis, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0));
  shm[24] = shm[25] = 0;
  shm[26] = (uint32_t)pft_gettid();
  res(c_futex(&shm[26], FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0));     /* ours: unlocked */
  word(shm[26]);
  shm[26] = 0;
}

/* A private PI op on a word whose owner is a live thread of another
 * process: the caller's bug, which Linux answers EPERM (word untouched);
 * the shared ops block or answer EAGAIN as for any owner. */
static pid_t foreign_kid;           /* a child that lives until main ends */

static void
pi_foreign(void)
{
  uint32_t *w = &shm[28];
  struct timespec rt = abs_in(PFUTEX_CLOCK_REALTIME, 30000000), mt = abs_in(PFUTEX_CLOCK_MONOTONIC, 30000000);
  *w = (uint32_t)foreign_kid;
  res(c_futex(w, FUTEX_TRYLOCK_PI_PRIVATE, 0, NULL, NULL, 0));
  word(*w);
  res(c_futex(w, FUTEX_LOCK_PI_PRIVATE, 0, &rt, NULL, 0));
  word(*w);
  res(c_futex(w, FUTEX_LOCK_PI2 | FUTEX_PRIVATE_FLAG, 0, &mt, NULL, 0));
  word(*w);
  res(c_futex(w, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0));             /* untimed: at once too */
  word(*w);
  res(c_futex(w, FUTEX_TRYLOCK_PI, 0, NULL, NULL, 0));                  /* shared: held */
  *w = 0;
}

static void
pi_contended(void)
{
  struct holder h;
  pthread_t th;
  struct timespec rpast = abs_in(PFUTEX_CLOCK_REALTIME, -1000), msoon = abs_in(PFUTEX_CLOCK_MONOTONIC, 30000000);
  struct timespec rsoon = abs_in(PFUTEX_CLOCK_REALTIME, 30000000);
  uint32_t *w = &shm[22];
  *w = 0;
  holder_start(&h, &th, w, 1, FUTEX_PRIVATE_FLAG);
  word(*w);
  res(c_futex(w, FUTEX_TRYLOCK_PI_PRIVATE, 0, NULL, NULL, 0));
  res(c_futex(w, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0));  /* not ours: EPERM */
  res(c_futex(w, FUTEX_LOCK_PI_PRIVATE, 0, &rpast, NULL, 0));
  word(*w);
  res(c_futex(w, FUTEX_LOCK_PI2_PRIVATE, 0, &msoon, NULL, 0));   /* LOCK_PI2: monotonic */
  res(c_futex(w, FUTEX_LOCK_PI2_PRIVATE | FUTEX_CLOCK_REALTIME, 0, &rsoon, NULL, 0));
  word(*w);
  holder_end(&h, th);
  word(*w);
}

struct locker {
  uint32_t *w;
  int op;
  volatile pid_t tid;
  volatile long ret;
  volatile uint32_t seen;
};

static void *
locker_thread(void *p)
{
  struct locker *l = p;
  l->tid = pft_gettid();
  l->ret = c_futex(l->w, l->op, 0, NULL, NULL, 0);
  l->seen = *l->w;
  if (l->ret == 0)
    (void)c_futex(l->w, FUTEX_UNLOCK_PI | (l->op & FUTEX_PRIVATE_FLAG), 0, NULL, NULL, 0);
  return NULL;
}

static void
pi_handoff_flags(int pf)
{
  struct holder h;
  struct locker l;
  pthread_t th, tl;
  uint32_t *w = &shm[23];
  *w = 0;
  holder_start(&h, &th, w, 1, pf);
  memset((void *)&l, 0, sizeof l);
  l.w = w;
  l.op = FUTEX_LOCK_PI | pf;
  if (pthread_create(&tl, NULL, locker_thread, &l) != 0)
    sysbail("pthread_create");
  while (!l.tid)
    usleep(100);
  roles[2] = l.tid;
  pft_wait_asleep(l.tid);
  usleep(20000);
  word(*w);                                            /* WAITERS set */
  h.release = 1;
  while (!h.done)
    usleep(100);
  pthread_join(tl, NULL);
  pthread_join(th, NULL);
  res(h.lret);
  res(h.uret);
  res(l.ret);
  word(l.seen);                                        /* handed to the locker */
  word(*w);
}

static void
pi_handoff_private(void)
{
  pi_handoff_flags(FUTEX_PRIVATE_FLAG);
}

static void
pi_handoff_shared(void)
{
  pi_handoff_flags(0);
}

/* The owner of a PI word exits holding it (no robust list), a locker
 * blocked: Linux hands the lock to the locker at the owner's exit. */
struct pexit {
  uint32_t *w;
  volatile pid_t tid;
  volatile int locked, go;
  volatile long lret;
};

static void *
pexit_thread(void *p)
{
  struct pexit *e = p;
  e->tid = pft_gettid();
  e->lret = c_futex(e->w, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0);
  e->locked = 1;
  while (!e->go)
    usleep(200);
  return NULL;                                         /* exits holding it */
}

static void
pi_owner_exits(void)
{
  struct pexit e;
  struct locker l;
  pthread_t te, tl;
  uint32_t *w = &shm[28];
  *w = 0;
  memset((void *)&e, 0, sizeof e);
  e.w = w;
  if (pthread_create(&te, NULL, pexit_thread, &e) != 0)
    sysbail("pthread_create");
  while (!e.locked)
    usleep(100);
  roles[1] = e.tid;
  memset((void *)&l, 0, sizeof l);
  l.w = w;
  l.op = FUTEX_LOCK_PI_PRIVATE;
  if (pthread_create(&tl, NULL, locker_thread, &l) != 0)
    sysbail("pthread_create");
  while (!l.tid)
    usleep(100);
  roles[2] = l.tid;
  pft_wait_asleep(l.tid);
  usleep(20000);
  word(*w);
  e.go = 1;
  pthread_join(te, NULL);
  pthread_join(tl, NULL);
  res(e.lret);
  res(l.ret);
  word(l.seen);
  word(*w);
}

struct rqwaiter {
  uint32_t *cond, *mutex;
  volatile pid_t tid;
  volatile long ret;
  volatile uint32_t seen;
};

static volatile int rq_hold;      /* the woken owner keeps the PI word while set */

static void *
rq_thread(void *p)
{
  struct rqwaiter *r = p;
  r->tid = pft_gettid();
  r->ret = c_futex(r->cond, FUTEX_WAIT_REQUEUE_PI_PRIVATE, 0, NULL, r->mutex, 0);
  r->seen = *r->mutex;
  while (r->ret == 0 && rq_hold)
    usleep(200);
  if (r->ret == 0)
    (void)c_futex(r->mutex, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0);
  return NULL;
}

static void
pi_requeue(void)
{
  struct rqwaiter r;
  pthread_t t;
  uint32_t *cond = &shm[24], *m = &shm[25];
  *cond = 0;
  *m = 0;
  res(c_futex(cond, FUTEX_CMP_REQUEUE_PI_PRIVATE, 1, (const struct timespec *)(uintptr_t)0, cond, 0));
  res(c_futex(cond, FUTEX_CMP_REQUEUE_PI_PRIVATE, 2, (const struct timespec *)(uintptr_t)0, m, 0));
  res(c_futex(cond, FUTEX_CMP_REQUEUE_PI_PRIVATE, 1, (const struct timespec *)(uintptr_t)0, m, 5));
  res(c_futex(cond, FUTEX_WAIT_REQUEUE_PI_PRIVATE, 1, NULL, m, 0));  /* mismatch */
  res(c_futex(cond, FUTEX_WAIT_REQUEUE_PI_PRIVATE, 0, NULL, cond, 0)); /* same word */
  memset((void *)&r, 0, sizeof r);
  r.cond = cond;
  r.mutex = m;
  if (pthread_create(&t, NULL, rq_thread, &r) != 0)
    sysbail("pthread_create");
  while (!r.tid)
    usleep(100);
  roles[2] = r.tid;
  pft_wait_asleep(r.tid);
  usleep(20000);
  *cond = 1;
  res(c_futex(cond, FUTEX_CMP_REQUEUE_PI_PRIVATE, 1, (const struct timespec *)(uintptr_t)0, m, 1));
  pthread_join(t, NULL);
  res(r.ret);
  word(r.seen);
  word(*m);
}

/* Two WAIT_REQUEUE_PI waiters on cond; then: mode 0, CMP_REQUEUE_PI(1, 1)
 * with the PI word free (one gets it, one is moved; the moved one is
 * handed the lock when the first unlocks); mode 1, the PI word held by a
 * helper (both moved, handed over in turn); mode 2, a plain FUTEX_WAKE of
 * cond (EINVAL: it wakes no requeue-PI waiter), then the requeue; mode 3,
 * as mode 1 with nr_requeue INT_MAX (a condvar broadcast). */
static void
pi_requeue_two(int mode)
{
  struct rqwaiter r[2];
  struct holder h;
  pthread_t t[2], th;
  uint32_t *cond = &shm[26], *m = &shm[27];
  int i;
  *cond = 0;
  *m = 0;
  if (mode == 1 || mode == 3)
    holder_start(&h, &th, m, 3, FUTEX_PRIVATE_FLAG);
  for (i = 0; i < 2; i++) {
    memset((void *)&r[i], 0, sizeof r[i]);
    r[i].cond = cond;
    r[i].mutex = m;
    if (pthread_create(&t[i], NULL, rq_thread, &r[i]) != 0)
      sysbail("pthread_create");
    while (!r[i].tid)
      usleep(100);
    roles[1 + i] = r[i].tid;
    pft_wait_asleep(r[i].tid);
  }
  usleep(20000);
  *cond = 1;
  if (mode == 2) {
    res(c_futex(cond, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0));
    usleep(20000);
  }
  rq_hold = 1;
  res(c_futex(cond, FUTEX_CMP_REQUEUE_PI_PRIVATE, 1,
              (const struct timespec *)(uintptr_t)(mode == 3 ? INT_MAX : 1), m, 1));
  usleep(20000);
  word(*m & ~FUTEX_TID_MASK);                          /* whose it is: either waiter */
  rq_hold = 0;
  if (mode == 1 || mode == 3) {
    usleep(20000);
    h.release = 1;
    pthread_join(th, NULL);
    res(h.lret);
    res(h.uret);
  }
  for (i = 0; i < 2; i++)
    pthread_join(t[i], NULL);
  /* which thread got it first is the kernel's choice as much as ours: sort */
  {
    long a = r[0].ret, b = r[1].ret;
    res(a < b ? a : b);
    res(a < b ? b : a);
  }
  word(*m);
}

static void
pi_requeue_free(void)
{
  pi_requeue_two(0);
}

static void
pi_requeue_broadcast(void)
{
  pi_requeue_two(3);
}

/* A WAIT_REQUEUE_PI waiter moved onto a PI word this thread holds, then
 * interrupted by a handler (no SA_RESTART): Linux does not restart that
 * wait and answers EAGAIN.  The first word keeps its value, so a restart
 * there would sleep again: the waiter's 2 s timeout would tell. */
static void
rqs_handler(int sig)
{
  (void)sig;
}

static void *
rqs_thread(void *p)
{
  struct rqwaiter *r = p;
  struct timespec dl;
  clock_gettime(CLOCK_MONOTONIC, &dl);
  dl.tv_sec += 2;
  r->tid = pft_gettid();
  r->ret = c_futex(r->cond, FUTEX_WAIT_REQUEUE_PI_PRIVATE, 0, &dl, r->mutex, 0);
  r->seen = *r->mutex;
  if (r->ret == 0)
    (void)c_futex(r->mutex, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0);
  return NULL;
}

static void
pi_requeue_signal(void)
{
  struct sigaction sa, old;
  struct rqwaiter r;
  pthread_t t;
  uint32_t *cond = &shm[29], *m = &shm[30];
  *cond = 0;
  *m = 0;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = rqs_handler;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGUSR1, &sa, &old) != 0)
    sysbail("sigaction");
  res(c_futex(m, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0));
  memset((void *)&r, 0, sizeof r);
  r.cond = cond;
  r.mutex = m;
  if (pthread_create(&t, NULL, rqs_thread, &r) != 0)
    sysbail("pthread_create");
  while (!r.tid)
    usleep(100);
  roles[1] = r.tid;
  pft_wait_asleep(r.tid);
  usleep(20000);
  res(c_futex(cond, FUTEX_CMP_REQUEUE_PI_PRIVATE, 1, (const struct timespec *)(uintptr_t)0, m, 0));
  usleep(20000);
  word(*m);
  pthread_kill(t, SIGUSR1);
  pthread_join(t, NULL);
  res(r.ret);
  res(c_futex(m, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0));
  word(*m);
  (void)sigaction(SIGUSR1, &old, NULL);
}

static void
pi_requeue_held(void)
{
  pi_requeue_two(1);
}

static void
pi_requeue_plainwake(void)
{
  pi_requeue_two(2);
}

/* ---- Robust lists --------------------------------------------------------------------------- */
struct rlock {
  struct robust_list link;
  uint32_t word;
};

static void
robust_calls(void)
{
  static struct robust_list_head head;
  struct robust_list_head *got = NULL, *mine = NULL;
  size_t len = 0, mlen = 0;
  (void)c_get_robust(0, &mine, &mlen);                 /* the C library's, put back below */
  head.list.next = &head.list;
  head.futex_offset = 0;
  head.list_op_pending = NULL;
  res(c_set_robust(&head, sizeof head + 1));
  res(c_set_robust(&head, sizeof head));
  res(c_get_robust(0, &got, &len));
  res(got == &head && len == sizeof head);
  res(c_get_robust(0x3ffffff0, &got, &len));           /* no such thread */
  if (mine)
    (void)c_set_robust(mine, mlen);
}

struct rdie {
  struct robust_list_head head;
  struct rlock a, b;
  uint32_t *wa, *wb;
  volatile pid_t tid;
  volatile long sret;
};

static void *
rdie_thread(void *p)
{
  struct rdie *d = p;
  pid_t me = pft_gettid();
  d->tid = me;
  d->head.futex_offset = (long)offsetof(struct rlock, word);
  d->a.word = (uint32_t)me | FUTEX_WAITERS;            /* held, a waiter below */
  d->b.word = (uint32_t)me;                            /* being taken: list_op_pending */
  d->a.link.next = &d->head.list;
  d->head.list.next = &d->a.link;
  d->head.list_op_pending = &d->b.link;
  d->sret = c_set_robust(&d->head, sizeof d->head);
  return NULL;                                         /* exits holding both */
}

struct rwaiter {
  uint32_t *w;
  uint32_t val;
  volatile long ret;
  volatile pid_t tid;
};

static void *
rwaiter_thread(void *p)
{
  struct rwaiter *r = p;
  struct timespec t = { 5, 0 };
  r->tid = pft_gettid();
  r->ret = c_futex(r->w, FUTEX_WAIT, r->val, &t, NULL, 0);
  return NULL;
}

static void
robust_exit(void)
{
  static struct rdie d;
  pthread_t t;
  memset(&d, 0, sizeof d);
  if (pthread_create(&t, NULL, rdie_thread, &d) != 0)
    sysbail("pthread_create");
  pthread_join(t, NULL);
  roles[1] = d.tid;
  res(d.sret);
  word(d.a.word);
  word(d.b.word);
}

struct owner2 {
  struct rdie *d;
  volatile int go, ready;
};

static void *
owner2_thread(void *p)
{
  struct owner2 *o = p;
  rdie_thread(o->d);
  o->ready = 1;
  while (!o->go)
    usleep(200);
  return NULL;
}

static void
robust_wake(void)
{
  static struct rdie d;
  struct owner2 o;
  struct rwaiter rw;
  pthread_t to, tw;
  memset(&d, 0, sizeof d);
  memset((void *)&o, 0, sizeof o);
  memset((void *)&rw, 0, sizeof rw);
  o.d = &d;
  if (pthread_create(&to, NULL, owner2_thread, &o) != 0)
    sysbail("pthread_create");
  while (!o.ready)
    usleep(100);
  roles[1] = d.tid;
  rw.w = &d.a.word;
  rw.val = d.a.word;
  if (pthread_create(&tw, NULL, rwaiter_thread, &rw) != 0)
    sysbail("pthread_create");
  while (!rw.tid)
    usleep(100);
  roles[2] = rw.tid;
  pft_wait_asleep(rw.tid);
  usleep(20000);
  o.go = 1;
  pthread_join(to, NULL);
  pthread_join(tw, NULL);
  res(d.sret);
  res(rw.ret);
  word(d.a.word);
  word(d.b.word);
}

/* A thread that registers a list of one lock (a, PI or not) and a
 * pending one (b), holding what init says, then exits when told. */
struct rdie2 {
  struct robust_list_head head;
  struct rlock a, b;
  int a_pi, b_pi, a_self, b_self, loop;
  uint32_t a_init, b_init;          /* | the thread's id when *_self */
  volatile pid_t tid;
  volatile int ready, go;
  volatile long sret;
};

static void *
rdie2_thread(void *p)
{
  struct rdie2 *d = p;
  pid_t me = pft_gettid();
  d->tid = me;
  d->head.futex_offset = (long)offsetof(struct rlock, word);
  d->a.word = d->a_init | (d->a_self ? (uint32_t)me : 0);
  d->b.word = d->b_init | (d->b_self ? (uint32_t)me : 0);
  d->a.link.next = d->loop ? &d->a.link : &d->head.list;
  d->head.list.next = (struct robust_list *)(void *)((uintptr_t)&d->a.link | (uintptr_t)d->a_pi);
  d->head.list_op_pending = (struct robust_list *)(void *)((uintptr_t)&d->b.link | (uintptr_t)d->b_pi);
  d->sret = c_set_robust(&d->head, sizeof d->head);
  d->ready = 1;
  while (!d->go)
    usleep(200);
  return NULL;
}

/* Start the owner; a blocked thread (PI lock of a, or FUTEX_WAIT on w
 * for its value) when `blocker`; the owner exits; results. */
static void
rdie2_run(struct rdie2 *d, int blocker, uint32_t *bw)
{
  pthread_t to, tl;
  struct locker l;
  struct rwaiter rw;
  if (pthread_create(&to, NULL, rdie2_thread, d) != 0)
    sysbail("pthread_create");
  while (!d->ready)
    usleep(100);
  roles[1] = d->tid;
  memset((void *)&l, 0, sizeof l);
  memset((void *)&rw, 0, sizeof rw);
  if (blocker == 1 || blocker == 3) { /* a PI locker of a (3: the private op) */
    l.w = &d->a.word;
    l.op = blocker == 3 ? FUTEX_LOCK_PI_PRIVATE : FUTEX_LOCK_PI;
    if (pthread_create(&tl, NULL, locker_thread, &l) != 0)
      sysbail("pthread_create");
    while (!l.tid)
      usleep(100);
    roles[2] = l.tid;
    pft_wait_asleep(l.tid);
  } else if (blocker == 2) {          /* a waiter on bw's value */
    rw.w = bw;
    rw.val = *bw;
    if (pthread_create(&tl, NULL, rwaiter_thread, &rw) != 0)
      sysbail("pthread_create");
    while (!rw.tid)
      usleep(100);
    roles[2] = rw.tid;
    pft_wait_asleep(rw.tid);
  }
  usleep(20000);
  d->go = 1;
  pthread_join(to, NULL);
  if (blocker)
    pthread_join(tl, NULL);
  res(d->sret);
  if (blocker == 1 || blocker == 3) {
    res(l.ret);
    word(l.seen);
  } else if (blocker == 2) {
    res(rw.ret);
  }
  word(d->a.word);
  word(d->b.word);
}

static void
robust_pi_exit(void)
{
  static struct rdie2 d;
  memset(&d, 0, sizeof d);
  d.a_pi = 1;
  d.a_self = 1;
  rdie2_run(&d, 1, NULL);
}

static void
robust_pi_exit_private(void)
{
  static struct rdie2 d;
  memset(&d, 0, sizeof d);
  d.a_pi = 1;
  d.a_self = 1;
  rdie2_run(&d, 3, NULL);
}

static void
robust_pi_noqueue(void)
{
  static struct rdie2 d;
  memset(&d, 0, sizeof d);
  d.a_pi = 1;
  d.a_self = 1;
  d.b_pi = 1;
  d.b_self = 1;
  d.b_init = FUTEX_WAITERS;
  rdie2_run(&d, 0, NULL);
}

static void
robust_pending_zero(void)
{
  static struct rdie2 d;
  memset(&d, 0, sizeof d);
  d.a_self = 0;
  d.a_init = 0x3ffffff0u;             /* another owner's: untouched */
  d.b_init = 0;                       /* pending, 0: a wake alone */
  rdie2_run(&d, 2, &d.b.word);
}

static void
robust_loop(void)
{
  static struct rdie2 d;
  memset(&d, 0, sizeof d);
  d.a_self = 1;
  d.loop = 1;                         /* a.next = a: the walk's limit ends it */
  d.b_self = 1;
  rdie2_run(&d, 0, NULL);
}

static void
robust_get_other(void)
{
  static struct rdie2 d;
  struct robust_list_head *got = NULL;
  size_t len = 0;
  pthread_t to;
  memset(&d, 0, sizeof d);
  if (pthread_create(&to, NULL, rdie2_thread, &d) != 0)
    sysbail("pthread_create");
  while (!d.ready)
    usleep(100);
  res(c_get_robust(d.tid, &got, &len));
  res(got == &d.head && len == sizeof d.head);
  res(c_get_robust(0, NULL, &len));
  d.a.word = 0;
  d.b.word = 0;
  d.go = 1;
  pthread_join(to, NULL);
}

static const struct {
  const char *name;
  void (*fn)(void);
  int kind;                 /* 0 waitv, 1 PI, 2 robust, 3 requeue-PI */
} cases[] = {
  { "waitv: argument errors", wv_args, 0 },
  { "waitv: entry errors", wv_entries, 0 },
  { "waitv: an unmapped private word", wv_unmapped, 0 },
  { "waitv: values and timeouts", wv_values, 0 },
  { "waitv: a private word's errors in order (EAGAIN before a later EFAULT)", wv_order, 0 },
  { "waitv: a wake of one word of three (private)", wv_wake_private, 0 },
  { "waitv: a wake of one word of three (shared)", wv_wake_shared, 0 },
  { "PI: lock, EDEADLK, unlock, EPERM, trylock", pi_self, 1 },
  { "PI: argument errors, ESRCH", pi_args, 1 },
  { "PI: UNLOCK_PI checks the owner first (EPERM on another's read-only or misaligned word)", pi_unlock_order, 1 },
  { "PI: held by another thread: trylock, EPERM, timeouts", pi_contended, 1 },
  { "PI: a private op on another process's owner (EPERM)", pi_foreign, 1 },
  { "PI: hand-off to the blocked locker (private)", pi_handoff_private, 1 },
  { "PI: hand-off to the blocked locker (shared)", pi_handoff_shared, 1 },
  { "PI: the owner exits holding it, a locker blocked", pi_owner_exits, 1 },
  { "PI: WAIT_REQUEUE_PI and CMP_REQUEUE_PI", pi_requeue, 3 },
  { "PI: requeue-PI, two waiters, the PI word free", pi_requeue_free, 3 },
  { "PI: requeue-PI, two waiters, the PI word held", pi_requeue_held, 3 },
  { "PI: requeue-PI, a plain wake first (EINVAL)", pi_requeue_plainwake, 3 },
  { "PI: requeue-PI, broadcast (nr_requeue INT_MAX) onto a held PI word", pi_requeue_broadcast, 3 },
  { "PI: requeue-PI, moved onto a held PI word, then a signal (EAGAIN)", pi_requeue_signal, 3 },
  { "robust: set and get", robust_calls, 2 },
  { "robust: a thread exits holding two locks", robust_exit, 2 },
  { "robust: a thread exits holding a lock a thread waits on", robust_wake, 2 },
  { "robust: a PI owner exits with a locker blocked", robust_pi_exit, 2 },
  { "robust: a PI owner exits with a private locker blocked", robust_pi_exit_private, 2 },
  { "robust: a PI owner exits, nobody queued (listed and pending)", robust_pi_noqueue, 2 },
  { "robust: a pending unlock (word 0) wakes a waiter; another's word untouched", robust_pending_zero, 2 },
  { "robust: a list that loops ends at the limit", robust_loop, 2 },
  { "robust: get_robust_list of another thread; a bad pointer", robust_get_other, 2 },
};

static void *
tid_of_thread(void *arg)
{
  (void)arg;
  return (void *)(uintptr_t)(pfutex_tid() == pft_gettid() && pfutex_tid() != getpid());
}

int
main(void)
{
  size_t i;
  const char *be;
  PFT_SKIP_UNDER_TSAN();          /* its threads poll plain flags (test-side, not the library) */
  plan_lazy();
  pft_watchdog(120);
  if (!(be = pfutex_backend()))
    skip_all("no backend");
  shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (shm == MAP_FAILED || unmapped == MAP_FAILED)
    sysbail("mmap");
  /* (the read-only page first: mapped after the munmap, it could take
   * the unmapped page's address) */
  ro_word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (ro_word == MAP_FAILED)
    sysbail("mmap");
  ro_word[0] = 12345;
  if (mprotect(ro_word, 4096, PROT_READ) != 0)
    sysbail("mprotect");
  munmap(unmapped, 4096);
  {
    int pfd[2];
    if (pipe(pfd) != 0 || (foreign_kid = fork()) < 0)
      sysbail("fork");
    if (foreign_kid == 0) {             /* alive until the parent's end closes the pipe */
      char c;
      close(pfd[1]);
      (void)!read(pfd[0], &c, 1);
      _exit(0);
    }
    close(pfd[0]);                      /* (the write end stays open in this process) */
  }
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    if (pft_emulator() && (cases[i].kind == 1 || cases[i].kind == 3)) {
      /* qemu-user passes the PI ops to the host with its own idea of the
       * threads: its answers for PI words other threads hold are no
       * reference (seen on armhf: hand-offs and timeouts differ) */
      skip("%s: under %s the kernel's PI ops are the emulator's: no reference", cases[i].name,
           pft_emulator());
      continue;
    }
    both(cases[i].name, cases[i].fn);
  }
  ok(pfutex_tid() == pft_gettid(), "pfutex_tid() is gettid()");
  {
    /* the id is cached per thread (src/tid.c): a fork child, whose
     * forking thread had it cached, and a new thread each have their own */
    pthread_t th;
    void *res = NULL;
    int st = -1;
    pid_t kid = fork();
    if (kid < 0)
      sysbail("fork");
    if (kid == 0)
      _exit(pfutex_tid() == pft_gettid() && pfutex_tid() == getpid() ? 0 : 1);
    while (waitpid(kid, &st, 0) < 0)
      if (errno != EINTR)
        sysbail("waitpid");
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a fork child's pfutex_tid() is its own gettid()");
    if (pthread_create(&th, NULL, tid_of_thread, NULL) != 0 || pthread_join(th, &res) != 0)
      sysbail("pthread_create");
    ok(res == (void *)1, "a new thread's pfutex_tid() is its own gettid()");
  }
  return 0;
}
#endif
