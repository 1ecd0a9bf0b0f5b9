/* region_corrupt: a region's memory is untrusted input.  Random scribbles
 * on a live region's header, process table, buckets and slots never make a
 * call crash, hang, return an invalid result or write outside the table;
 * a corrupt header of a named region makes a new open fail with a clear
 * errno.
 *
 * (a) Live regions (white-box: the handle, src/region/internal.h, locates
 *     the parts).
 *     Five classes of target: the header, the process table, the buckets,
 *     the slots, and the whole table; each runs RC_EPOCHS fresh anonymous
 *     regions (slots 16, buckets 4, procs 8) of RC_ROUNDS rounds, 300 rounds
 *     in all.  In each region two waiter threads and two child processes
 *     run random ops on the region's words (half of them waits with a
 *     200 ms timeout) while the main thread, each round, writes 1-3 random
 *     values at random offsets of the class's range (random words, small
 *     integers that look like references, states or indices, extremes like
 *     0xffffffff, self-references that make cycles, live and dead lock ids,
 *     pids, random bytes at odd offsets) and then runs every op once
 *     (FUTEX_WAIT, WAKE, REQUEUE, CMP_REQUEUE, WAKE_OP, WAIT_BITSET,
 *     WAKE_BITSET through pfutex(), and pfutex_wait/wake/requeue/
 *     cmp_requeue/wake_op), every word shared (no private flag).  Checked,
 *     per class:
 *       - no process crashes (a signal, or an ASan/UBSan report: exit != 0);
 *       - every call returns within RC_HANG_S seconds (a hang check, not a
 *         speed assertion: a monitor process watches each call's start);
 *       - every result is valid: a count in [0, the counts asked], or -1
 *         with errno among EAGAIN/ETIMEDOUT/EINTR (waits; EAGAIN also
 *         cmp_requeue), ENOTRECOVERABLE, ENOMEM, EINVAL;
 *       - memory outside the table is unchanged: canary pages mapped right
 *         before and after the region's mapping (when the kernel places
 *         them there), the region's user area beyond the words in use, and
 *         a heap buffer;
 *       - the handle's geometry (table, slot and bucket pointers, counts,
 *         the user area) is unchanged: a scribble cannot move the table.
 *     The header class also checks the region still works afterwards (a
 *     wait woken by a wake that counts 1): the geometry is read once, so
 *     the header's later content does not matter to a live region.
 *     Under the native backend the table is unused: the same checks pass
 *     trivially (the kernel does the work).
 * (b) A named region's header, corrupted field by field (version, ABI
 *     sizes, geometry, offsets, offsets that wrap around 2^64, the object's
 *     size): pfutex_region_open of it, in a child process, fails with
 *     EPROTO (another layout or ABI), ENOTRECOVERABLE (inconsistent) or
 *     EINVAL (not a region / the wrong kind), never crashes or succeeds.
 *
 * The seed is printed (PFT_SEED=n replays it; the threads' and children's
 * timing is not replayed).  PFT_HANG_GDB=1 prints the stack of a call that
 * hung (gdb -p), a debugging aid.  Minimal reproductions of what it found:
 * repro/region_corrupt_repro.c. */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork() (each corruption runs in a child)");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
# include <sys/prctl.h>
#endif

#include "region/internal.h"
#include "pft.h"
#include "pfutex/linux.h"

#define RC_SLOTS 16
#define RC_BUCKETS 4
#define RC_PROCS 8
#define RC_USER 4096
#define RC_NWORDS 8                 /* words 0..7: the ops' words */
#define RC_POST_WORD 8              /* the header class's last wait/wake */
#define RC_CANARY_FROM 16           /* words from here on: a canary */
#define RC_THREADS 2
#define RC_CHILDREN 2
#define RC_ACTORS (1 + RC_THREADS + RC_CHILDREN + 1)   /* main, threads, children, post */
#define RC_POST_ACTOR (RC_ACTORS - 1)
#define RC_EPOCHS 3
#define RC_ROUNDS 20
#define RC_HANG_S 5
#define RC_WAIT_MS 200              /* the waiters' timeout */
#define RC_MAIN_WAIT_MS 2           /* the main thread's */
#define RC_GUARD_PAGES 2
#define RC_WLOG 16
#define RC_BADLOG 8

enum { RC_HEADER, RC_PROCS_T, RC_BUCKETS_T, RC_SLOTS_T, RC_ALL, RC_NCLASSES };
static const char *const rc_class_names[RC_NCLASSES] = {
  "header", "process table", "buckets", "slots", "whole table"
};

enum {
  OP_WAIT, OP_WAKE, OP_REQUEUE, OP_CMP_REQUEUE, OP_WAKE_OP, OP_WAIT_BITSET, OP_WAKE_BITSET,
  OP_C_WAIT, OP_C_WAKE, OP_C_REQUEUE, OP_C_CMP_REQUEUE, OP_C_WAKE_OP, OP_N
};
static const char *const rc_op_names[OP_N] = {
  "FUTEX_WAIT", "FUTEX_WAKE", "FUTEX_REQUEUE", "FUTEX_CMP_REQUEUE", "FUTEX_WAKE_OP",
  "FUTEX_WAIT_BITSET", "FUTEX_WAKE_BITSET", "pfutex_wait", "pfutex_wake", "pfutex_requeue",
  "pfutex_cmp_requeue", "pfutex_wake_op"
};

/* Result classes counted: success, then the errnos allowed. */
static const int rc_errs[] = { EAGAIN, ETIMEDOUT, EINTR, ENOTRECOVERABLE, ENOMEM, EINVAL };
#define RC_NERRS ((int)(sizeof rc_errs / sizeof rc_errs[0]))

struct rc_actor {
  volatile long long start_ns;      /* a call in progress since (0: none) */
  volatile int op, round, pid;
};
struct rc_bad {
  int actor, op, round, err;
  long ret;
  long long max;
  int nr, nr2, same;
  uint32_t wop;
};
struct rc_write {
  int round, kind;
  uint32_t off, len;
  uint32_t val;
};
/* Shared between the monitor (the test's main process), the driver of one
 * region and its children. */
struct rc_shared {
  struct rc_actor actor[RC_ACTORS];
  volatile int stop, round, done, check_req, checked;
  long calls, ok, errs[RC_NERRS];
  long nbad;
  struct rc_bad bad[RC_BADLOG];
  unsigned int nwrites;
  struct rc_write wlog[RC_WLOG];
  int child_crashes, child_status;
  int canary_bad, guard_bad, heap_bad, guards_adjacent, geom_bad;
  int works_checked, works;          /* the header class's last wait/wake */
  long post_wake, post_wait;
  int post_err;
  int check_ret;
  char check_why[96];
  int setup_err;
};

static struct rc_shared *S;
static uint32_t *rc_words;
static char *rc_map;
static size_t rc_map_len;
static pfutex_region_t *rc_rg;

/* Short names for the errnos pft_errname spells out. */
static const char *
rc_errname(int e)
{
  switch (e) {
  case EPROTO: return "EPROTO";
  case ENOTRECOVERABLE: return "ENOTRECOVERABLE";
  case ENOMEM: return "ENOMEM";
  case EINVAL: return "EINVAL";
  default: return pft_errname(e);
  }
}

/* ---- PRNG (xorshift64*) ------------------------------------------------------ */
static uint64_t
rc_rand(uint64_t *s)
{
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545f4914f6cdd1dull;
}

static uint64_t
rc_seed_mix(uint64_t seed, uint64_t k)
{
  uint64_t x = seed ^ (k * 0x9e3779b97f4a7c15ull);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x ? x : 1;
}

/* ---- One op, monitored and checked ---------------------------------------------- */

static void
rc_abs_in(struct timespec *ts, int ms)
{
  clock_gettime(CLOCK_MONOTONIC, ts);
  pft_timespec_add_ns(ts, (long long)ms * 1000000);
}

static int
rc_err_allowed(int op, int e)
{
  switch (op) {
  case OP_WAIT: case OP_WAIT_BITSET: case OP_C_WAIT:
    return e == EAGAIN || e == ETIMEDOUT || e == EINTR || e == ENOTRECOVERABLE || e == ENOMEM;
  case OP_CMP_REQUEUE: case OP_C_CMP_REQUEUE:
    return e == EAGAIN || e == ENOTRECOVERABLE || e == ENOMEM || e == EINVAL;
  default:
    return e == ENOTRECOVERABLE || e == ENOMEM || e == EINVAL;
  }
}

struct rc_args {
  int nr, nr2, same;
  uint32_t wop;
};

static void
rc_record(int actor, int op, long ret, int err, long long max, const struct rc_args *ar)
{
  int valid, i;
  __atomic_fetch_add(&S->calls, 1, __ATOMIC_RELAXED);
  if (ret >= 0) {
    valid = ret <= max;
    __atomic_fetch_add(&S->ok, 1, __ATOMIC_RELAXED);
  } else {
    valid = ret == -1 && rc_err_allowed(op, err);
    for (i = 0; i < RC_NERRS; i++)
      if (rc_errs[i] == err)
        __atomic_fetch_add(&S->errs[i], 1, __ATOMIC_RELAXED);
  }
  if (!valid) {
    long n = __atomic_fetch_add(&S->nbad, 1, __ATOMIC_RELAXED);
    if (n < RC_BADLOG) {
      S->bad[n].actor = actor;
      S->bad[n].op = op;
      S->bad[n].round = S->round;
      S->bad[n].ret = ret;
      S->bad[n].err = err;
      S->bad[n].max = max;
      S->bad[n].nr = ar->nr;
      S->bad[n].nr2 = ar->nr2;
      S->bad[n].same = ar->same;
      S->bad[n].wop = ar->wop;
    }
  }
}

static uint32_t
rc_mask(uint64_t *rng)
{
  static const uint32_t masks[] = { FUTEX_BITSET_MATCH_ANY, 1, 2, 3, 0x80000001u };
  return masks[rc_rand(rng) % 5];
}

static int
rc_count(uint64_t *rng, int zero_ok)
{
  static const int counts[] = { 1, 2, INT_MAX, 0 };
  return counts[rc_rand(rng) % (zero_ok ? 4 : 3)];
}

/* Run op on random words; wait_ms for the waits. */
static void
rc_op(int actor, uint64_t *rng, int op, int wait_ms)
{
  struct rc_actor *A = &S->actor[actor];
  uint32_t *a = &rc_words[rc_rand(rng) % RC_NWORDS];
  uint32_t *b = &rc_words[rc_rand(rng) % RC_NWORDS];
  uint32_t v = __atomic_load_n(a, __ATOMIC_SEQ_CST), mask = rc_mask(rng);
  uint32_t wop = PFUTEX_OP(rc_rand(rng) % 5, rc_rand(rng) % 4, rc_rand(rng) % 6, rc_rand(rng) % 3);
  int nr = rc_count(rng, 0), nr2 = rc_count(rng, 1), e;
  long ret;
  long long max = 0;
  struct timespec rel = { 0, (long)wait_ms * 1000000 }, abs;
  struct rc_args ar;

  if (rc_rand(rng) % 8 == 0)
    v++;                                      /* a mismatch now and then */
  if (op == OP_WAKE_OP || op == OP_C_WAKE_OP)
    wop &= ~((uint32_t)PFUTEX_OP_OPARG_SHIFT << 28);  /* keep the words small */
  rc_abs_in(&abs, wait_ms);
  A->op = op;
  A->round = S->round;
  __atomic_store_n(&A->start_ns, pft_now_ns(), __ATOMIC_SEQ_CST);
  errno = 0;
  switch (op) {
  case OP_WAIT:
    ret = pfutex(a, FUTEX_WAIT, v, &rel, NULL, 0);
    break;
  case OP_WAKE:
    ret = pfutex(a, FUTEX_WAKE, (uint32_t)nr, NULL, NULL, 0);
    max = nr;
    break;
  case OP_REQUEUE:
    ret = pfutex(a, FUTEX_REQUEUE, (uint32_t)nr, (const struct timespec *)(uintptr_t)nr2, b, 0);
    max = (long long)nr + nr2;
    break;
  case OP_CMP_REQUEUE:
    ret = pfutex(a, FUTEX_CMP_REQUEUE, (uint32_t)nr, (const struct timespec *)(uintptr_t)nr2, b,
                 v);
    max = (long long)nr + nr2;
    break;
  case OP_WAKE_OP:
    ret = pfutex(a, FUTEX_WAKE_OP, (uint32_t)nr, (const struct timespec *)(uintptr_t)nr2, b, wop);
    max = (long long)nr + (nr2 ? nr2 : 1);       /* Linux: nr_wake2 0 wakes one all the same */
    break;
  case OP_WAIT_BITSET:
    ret = pfutex(a, FUTEX_WAIT_BITSET, v, &abs, NULL, mask);
    break;
  case OP_WAKE_BITSET:
    ret = pfutex(a, FUTEX_WAKE_BITSET, (uint32_t)nr, NULL, NULL, mask);
    max = nr;
    break;
  case OP_C_WAIT:
    ret = pfutex_wait(a, v, mask, PFUTEX_SHARED, &abs, PFUTEX_CLOCK_MONOTONIC);
    break;
  case OP_C_WAKE:
    ret = pfutex_wake(a, mask, nr, PFUTEX_SHARED);
    max = nr;
    break;
  case OP_C_REQUEUE:
    ret = pfutex_requeue(a, b, nr, nr2, PFUTEX_SHARED);
    max = (long long)nr + nr2;
    break;
  case OP_C_CMP_REQUEUE:
    ret = pfutex_cmp_requeue(a, v, b, nr, nr2, PFUTEX_SHARED);
    max = (long long)nr + nr2;
    break;
  default:
    ret = pfutex_wake_op(a, b, nr, nr2, wop, PFUTEX_SHARED);
    max = (long long)nr + nr2;
    break;
  }
  e = errno;
  __atomic_store_n(&A->start_ns, 0, __ATOMIC_SEQ_CST);
  ar.nr = nr;
  ar.nr2 = nr2;
  ar.same = a == b;
  ar.wop = wop;
  rc_record(actor, op, ret, e, max, &ar);
}

/* The background actors: half waits (RC_WAIT_MS), half other ops. */
static void
rc_actor_loop(int actor, uint64_t seed)
{
  uint64_t rng = rc_seed_mix(seed, (uint64_t)actor + 1000);
  static const int waits[] = { OP_WAIT, OP_WAIT_BITSET, OP_C_WAIT };
  static const int others[] = { OP_WAKE, OP_REQUEUE, OP_CMP_REQUEUE, OP_WAKE_OP, OP_WAKE_BITSET,
                                OP_C_WAKE, OP_C_REQUEUE, OP_C_CMP_REQUEUE, OP_C_WAKE_OP };
  while (!__atomic_load_n(&S->stop, __ATOMIC_SEQ_CST)) {
    if (rc_rand(&rng) % 2)
      rc_op(actor, &rng, waits[rc_rand(&rng) % 3], RC_WAIT_MS);
    else
      rc_op(actor, &rng, others[rc_rand(&rng) % 9], RC_WAIT_MS);
  }
}

struct rc_thread_arg {
  int actor;
  uint64_t seed;
  volatile int done;
};

static void *
rc_thread_main(void *p)
{
  struct rc_thread_arg *t = p;
  S->actor[t->actor].pid = (int)pft_gettid();
  rc_actor_loop(t->actor, t->seed);
  __atomic_store_n(&t->done, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

/* ---- Corruption --------------------------------------------------------------------- */

struct rc_range {
  uint32_t lo, hi;
};

static struct rc_range
rc_class_range(int cls)
{
  struct pfutex_region *rg = rc_rg;
  struct rc_range r;
  uint32_t procs = (uint32_t)((char *)rg->att->procs - rc_map);
  uint32_t buckets = (uint32_t)((char *)rg->att->tab.buckets - rc_map);
  uint32_t slots = (uint32_t)((char *)rg->att->tab.slots - rc_map);
  uint32_t slots_end = slots + rg->att->tab.nslots * (uint32_t)sizeof(struct pf_node);
  switch (cls) {
  case RC_HEADER: r.lo = 0; r.hi = sizeof(struct pf_rgn_hdr); break;
  case RC_PROCS_T: r.lo = procs; r.hi = procs + rg->att->nprocs * (uint32_t)sizeof(struct pf_rgn_proc); break;
  case RC_BUCKETS_T: r.lo = buckets; r.hi = buckets + rg->att->tab.nbuckets * (uint32_t)sizeof(struct pf_bucket); break;
  case RC_SLOTS_T: r.lo = slots; r.hi = slots_end; break;
  default: r.lo = 0; r.hi = slots_end; break;
  }
  return r;
}

enum { W_RANDOM, W_SMALL, W_EXTREME, W_SELFREF, W_LOCKID, W_PID, W_ZERO, W_BYTES, W_NKINDS };
static const char *const rc_wkind_names[W_NKINDS] = {
  "random", "small", "extreme", "self-reference", "lock id", "pid", "zero", "bytes"
};

static pid_t rc_child_pids[RC_CHILDREN];

static uint32_t
rc_value(uint64_t *rng, int kind, uint32_t off)
{
  struct pfutex_region *rg = rc_rg;
  uint32_t slots = (uint32_t)((char *)rg->att->tab.slots - rc_map);
  static const uint32_t extremes[] = { 0xffffffffu, 0x80000000u, 0x7fffffffu, 0xfffffffeu,
                                       0x10000u, 0xffffu, RC_SLOTS + 1, RC_BUCKETS };
  switch (kind) {
  case W_RANDOM:
    return (uint32_t)rc_rand(rng);
  case W_SMALL:
    return (uint32_t)(rc_rand(rng) % (RC_SLOTS + 4));
  case W_EXTREME:
    return extremes[rc_rand(rng) % 8];
  case W_SELFREF:
    if (off >= slots && off < slots + rg->att->tab.nslots * sizeof(struct pf_node))
      return (off - slots) / (uint32_t)sizeof(struct pf_node) + 1;   /* its own slot: a cycle */
    return (uint32_t)(rc_rand(rng) % RC_SLOTS) + 1;                  /* some slot */
  case W_LOCKID: {
    uint32_t e = (uint32_t)(rc_rand(rng) % rg->att->nprocs);
    uint32_t gen = __atomic_load_n(&rg->att->procs[e].gen, __ATOMIC_RELAXED);
    return ((gen & 0xffffu) << 16) | (e + 1);          /* live or dead: whoever holds e */
  }
  case W_PID: {
    uint32_t pid = rc_rand(rng) % 2 ? (uint32_t)getpid()
                                     : (uint32_t)rc_child_pids[rc_rand(rng) % RC_CHILDREN];
    return rc_rand(rng) % 3 ? pid : (pid | PF_RGN_CLAIMING);
  }
  default:
    return 0;
  }
}

static void
rc_corrupt(uint64_t *rng, int cls, int round)
{
  struct rc_range r = rc_class_range(cls);
  unsigned int pick = (unsigned int)(rc_rand(rng) % 100), k;
  int kind;
  uint32_t off, len = 4, val;

  if (pick < 20) kind = W_RANDOM;
  else if (pick < 40) kind = W_SMALL;
  else if (pick < 50) kind = W_EXTREME;
  else if (pick < 63) kind = W_SELFREF;
  else if (pick < 73) kind = W_LOCKID;
  else if (pick < 80) kind = W_PID;
  else if (pick < 88) kind = W_ZERO;
  else kind = W_BYTES;

  off = r.lo + (uint32_t)(rc_rand(rng) % (r.hi - r.lo));
  if (kind == W_BYTES) {
    uint64_t bytes = rc_rand(rng);
    len = 1 + (uint32_t)(rc_rand(rng) % 8);
    if (off + len > r.hi)
      len = r.hi - off;
    for (k = 0; k < len; k++)
      __atomic_store_n((unsigned char *)rc_map + off + k, (unsigned char)(bytes >> (8 * k)),
                       __ATOMIC_RELAXED);
    val = (uint32_t)bytes;
  } else {
    off &= ~3u;
    val = rc_value(rng, kind, off);
    __atomic_store_n((uint32_t *)(void *)(rc_map + off), val, __ATOMIC_SEQ_CST);
  }
  k = S->nwrites++ % RC_WLOG;
  S->wlog[k].round = round;
  S->wlog[k].kind = kind;
  S->wlog[k].off = off;
  S->wlog[k].len = len;
  S->wlog[k].val = val;
}

/* ---- The driver: one region, its actors, RC_ROUNDS rounds ---------------------------- */

static uint32_t
rc_canary(size_t i)
{
  return 0xc0de0000u ^ (uint32_t)(i * 2654435761u);
}

struct rc_geom {
  struct pf_table tab;
  void *procs, *hdr, *map, *user;
  uint32_t nprocs;
  size_t map_len, user_len;
  uintptr_t lo, span, key_base;
};

static void
rc_geom_get(struct rc_geom *g)
{
  struct pfutex_region *rg = rc_rg;
  memset(g, 0, sizeof *g);
  g->tab = rg->att->tab;
  g->procs = rg->att->procs;
  g->hdr = rg->att->hdr;
  g->map = rg->att->map;
  g->user = rg->user;
  g->nprocs = rg->att->nprocs;
  g->map_len = rg->map_len;
  g->user_len = rg->user_len;
  g->lo = rg->ks.lo;
  g->span = rg->ks.span;
  g->key_base = rg->ks.key_base;
}

static int
rc_geom_eq(const struct rc_geom *a, const struct rc_geom *b)
{
  return a->tab.buckets == b->tab.buckets && a->tab.nbuckets == b->tab.nbuckets
         && a->tab.bits == b->tab.bits && a->tab.slots == b->tab.slots
         && a->tab.nslots == b->tab.nslots && a->tab.rgn == b->tab.rgn
         && a->tab.order == b->tab.order && a->procs == b->procs && a->hdr == b->hdr
         && a->map == b->map && a->user == b->user && a->nprocs == b->nprocs
         && a->map_len == b->map_len && a->user_len == b->user_len && a->lo == b->lo
         && a->span == b->span && a->key_base == b->key_base;
}

/* Canary pages right before and after the mapping, if the kernel puts them
 * there (MAP_FIXED_NOREPLACE), else wherever it likes. */
static unsigned char *
rc_guard(void *want, size_t len, int *adjacent)
{
  int flags = MAP_PRIVATE | MAP_ANONYMOUS;
  void *p;
#ifdef MAP_FIXED_NOREPLACE
  p = mmap(want, len, PROT_READ | PROT_WRITE, flags | MAP_FIXED_NOREPLACE, -1, 0);
  if (p == MAP_FAILED)
#endif
    p = mmap(want, len, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (p == MAP_FAILED)
    return NULL;
  *adjacent = p == want;
  memset(p, 0xa5, len);
  return p;
}

static int
rc_all_a5(const unsigned char *p, size_t len)
{
  size_t i;
  for (i = 0; i < len; i++)
    if (p[i] != 0xa5)
      return 0;
  return 1;
}

static void
rc_reap_children(int *left, pid_t *pids)
{
  int i, st;
  for (i = 0; i < RC_CHILDREN; i++) {
    if (pids[i] <= 0)
      continue;
    if (waitpid(pids[i], &st, WNOHANG) == pids[i]) {
      if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        S->child_crashes++;
        S->child_status = st;
      }
      pids[i] = 0;
      (*left)--;
    }
  }
}

/* The header class: does the region still work?  A thread waits on the
 * post word (10 s deadline: a lost wakeup fails, never hangs), and once
 * it is asleep a wake must count 1. */
struct rc_post {
  pid_t tid;
  long ret;
  int err;
};

static void *
rc_post_main(void *p)
{
  struct rc_post *w = p;
  struct rc_actor *A = &S->actor[RC_POST_ACTOR];
  struct timespec dl;
  __atomic_store_n(&w->tid, pft_gettid(), __ATOMIC_SEQ_CST);
  rc_abs_in(&dl, 10000);
  A->op = OP_C_WAIT;
  __atomic_store_n(&A->start_ns, pft_now_ns(), __ATOMIC_SEQ_CST);
  errno = 0;
  w->ret = pfutex_wait(&rc_words[RC_POST_WORD], 0, PFUTEX_BITSET_MATCH_ANY, PFUTEX_SHARED, &dl,
                       PFUTEX_CLOCK_MONOTONIC);
  w->err = errno;
  __atomic_store_n(&A->start_ns, 0, __ATOMIC_SEQ_CST);
  return NULL;
}

static void
rc_post_check(void)
{
  struct rc_post w = { 0, -2, 0 };
  struct rc_actor *A = &S->actor[0];
  pthread_t t;
  if (pthread_create(&t, NULL, rc_post_main, &w) != 0)
    return;
  while (!__atomic_load_n(&w.tid, __ATOMIC_SEQ_CST))
    sched_yield();
  pft_wait_asleep(w.tid);
  A->op = OP_C_WAKE;
  __atomic_store_n(&A->start_ns, pft_now_ns(), __ATOMIC_SEQ_CST);
  S->post_wake = pfutex_wake(&rc_words[RC_POST_WORD], PFUTEX_BITSET_MATCH_ANY, INT_MAX,
                             PFUTEX_SHARED);
  __atomic_store_n(&A->start_ns, 0, __ATOMIC_SEQ_CST);
  pthread_join(t, NULL);
  S->post_wait = w.ret;
  S->post_err = w.err;
  S->works_checked = 1;
  S->works = S->post_wake == 1 && w.ret == 0;
}

/* The checks of memory outside the table: pure reads, no pfutex call, run
 * by a thread of their own on request (S->check_req), so they are made even
 * when another thread of the driver hangs (the monitor asks before it kills
 * the driver). */
static struct rc_geom rc_g0;
static unsigned char *rc_before, *rc_after, *rc_heap;
static size_t rc_glen;

static void
rc_outside_checks(void)
{
  struct rc_geom g1;
  size_t i;
  rc_geom_get(&g1);
  S->geom_bad = !rc_geom_eq(&rc_g0, &g1);
  for (i = RC_CANARY_FROM; i < RC_USER / 4; i++)
    if (rc_words[i] != rc_canary(i))
      S->canary_bad++;
  for (i = RC_NWORDS; i < RC_CANARY_FROM; i++)
    if (i != RC_POST_WORD && rc_words[i] != 0)
      S->canary_bad++;
  S->guard_bad = !rc_all_a5(rc_before, rc_glen) + !rc_all_a5(rc_after, rc_glen);
  S->heap_bad = !rc_all_a5(rc_heap, 4096);
}

static void *
rc_checker_main(void *p)
{
  struct timespec ms = { 0, 2 * 1000 * 1000 };
  (void)p;
  while (!__atomic_load_n(&S->check_req, __ATOMIC_SEQ_CST))
    nanosleep(&ms, NULL);                 /* servicing a request, not a synchronisation */
  rc_outside_checks();
  __atomic_store_n(&S->checked, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

static void
rc_driver(int cls, uint64_t seed)
{
  pfutex_region_attr_t attr;
  struct rc_thread_arg targ[RC_THREADS];
  pthread_t th[RC_THREADS];
  pid_t pids[RC_CHILDREN];
  pthread_t checker;
  struct pf_region_stats st;
  uint64_t rng = rc_seed_mix(seed, 7);
  long ps = sysconf(_SC_PAGESIZE);
  size_t glen = (size_t)ps * RC_GUARD_PAGES, i;
  unsigned char *before, *after, *heap;
  const char *why = "";
  int adj1 = 0, adj2 = 0, round, op, left, k;

#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
  memset(&attr, 0, sizeof attr);
  attr.slots = RC_SLOTS;
  attr.buckets = RC_BUCKETS;
  attr.procs = RC_PROCS;
  if (!(rc_rg = pfutex_region_anon_attr(RC_USER, &attr))) {
    S->setup_err = errno;
    _exit(3);
  }
  rc_map = rc_rg->att->map;
  rc_map_len = rc_rg->map_len;
  rc_words = pfutex_region_addr(rc_rg);
  for (i = RC_CANARY_FROM; i < RC_USER / 4; i++)
    rc_words[i] = rc_canary(i);
  before = rc_guard(rc_map - glen, glen, &adj1);
  after = rc_guard(rc_map + rc_map_len, glen, &adj2);
  heap = malloc(4096);
  if (!before || !after || !heap) {
    S->setup_err = ENOMEM;
    _exit(3);
  }
  memset(heap, 0xa5, 4096);
  S->guards_adjacent = adj1 + adj2;
  rc_geom_get(&rc_g0);
  rc_before = before;
  rc_after = after;
  rc_heap = heap;
  rc_glen = glen;

  /* Children first (a fork from a process with threads only once they
   * sleep), then the threads. */
  for (k = 0; k < RC_CHILDREN; k++) {
    fflush(stdout);
    pids[k] = fork();
    if (pids[k] < 0)
      _exit(4);
    if (pids[k] == 0) {
#ifdef __linux__
      prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
      S->actor[1 + RC_THREADS + k].pid = (int)getpid();
      rc_actor_loop(1 + RC_THREADS + k, rc_seed_mix(seed, 100 + (uint64_t)k));
      _exit(0);
    }
    rc_child_pids[k] = pids[k];
  }
  if (pthread_create(&checker, NULL, rc_checker_main, NULL) != 0)
    _exit(4);
  for (k = 0; k < RC_THREADS; k++) {
    targ[k].actor = 1 + k;
    targ[k].seed = rc_seed_mix(seed, 200 + (uint64_t)k);
    targ[k].done = 0;
    if (pthread_create(&th[k], NULL, rc_thread_main, &targ[k]) != 0)
      _exit(4);
  }

  S->actor[0].pid = (int)getpid();
  for (round = 0; round < RC_ROUNDS; round++) {
    int writes = 1 + (int)(rc_rand(&rng) % 3);
    S->round = round;
    for (k = 0; k < writes; k++)
      rc_corrupt(&rng, cls, round);
    for (op = 0; op < OP_N; op++)
      rc_op(0, &rng, op, RC_MAIN_WAIT_MS);
  }

  /* Stop: wake everyone until every actor is done (each call bounded by
   * the monitor), then the checks. */
  __atomic_store_n(&S->stop, 1, __ATOMIC_SEQ_CST);
  left = RC_CHILDREN;
  for (;;) {
    int threads_left = 0;
    for (k = 0; k < RC_THREADS; k++)
      threads_left += !__atomic_load_n(&targ[k].done, __ATOMIC_SEQ_CST);
    rc_reap_children(&left, pids);
    if (!threads_left && !left)
      break;
    for (k = 0; k < RC_NWORDS; k++)
      rc_op(0, &rng, OP_C_WAKE, 0);
    usleep(2000);
  }
  for (k = 0; k < RC_THREADS; k++)
    pthread_join(th[k], NULL);

  __atomic_store_n(&S->check_req, 1, __ATOMIC_SEQ_CST);
  pthread_join(checker, NULL);

  if (cls == RC_HEADER)
    rc_post_check();
  S->check_ret = pft_backend_is_emu() ? pf_region_check(rc_rg, &st, &why) : 0;
  if (S->check_ret < 0)
    snprintf(S->check_why, sizeof S->check_why, "%s", why);
  __atomic_store_n(&S->done, 1, __ATOMIC_SEQ_CST);
  fflush(stdout);
  _exit(0);
}

/* ---- The monitor: run one driver, watch every call ------------------------------------- */

struct rc_class_result {
  int runs, crashes, hangs, setup_fail;
  long calls, ok, errs[RC_NERRS], nbad;
  int canary_bad, guard_bad, heap_bad, geom_bad, adjacent;
  int works_checked, works_fail;
  int check_bad, completed;
};

static void
rc_dump_writes(void)
{
  unsigned int n = S->nwrites, i, from = n > 6 ? n - 6 : 0;
  for (i = from; i < n; i++) {
    const struct rc_write *w = &S->wlog[i % RC_WLOG];
    diag("      round %d: %s write of %u byte(s) at offset %u: 0x%08x", w->round,
         rc_wkind_names[w->kind], w->len, w->off, w->val);
  }
}

static void
rc_run(int cls, int epoch, uint64_t seed, struct rc_class_result *res)
{
  long long hang_ns = (long long)RC_HANG_S * 1000000000LL;
  const char *scale = getenv("PFUTEX_TEST_TIMEOUT_SCALE");
  pid_t pid, w;
  int st, k, hung = 0;

  if (scale && atoi(scale) > 1)
    hang_ns *= atoi(scale);
  memset(S, 0, sizeof *S);
  fflush(stdout);
  pid = fork();
  if (pid < 0)
    sysbail("fork");
  if (pid == 0) {
    setpgid(0, 0);
    rc_driver(cls, rc_seed_mix(seed, (uint64_t)cls * 100 + (uint64_t)epoch));
  }
  setpgid(pid, pid);
  res->runs++;
  for (;;) {
    struct timespec ms = { 0, 5 * 1000 * 1000 };
    w = waitpid(pid, &st, WNOHANG);
    if (w == pid)
      break;
    for (k = 0; k < RC_ACTORS && !hung; k++) {
      long long s = __atomic_load_n(&S->actor[k].start_ns, __ATOMIC_SEQ_CST);
      if (s != 0 && pft_now_ns() - s > hang_ns) {
        hung = 1;
        res->hangs++;
        diag("%s, region %d: %s by actor %d (pid/tid %d) in round %d has not returned "
             "after %d s: killing it", rc_class_names[cls], epoch, rc_op_names[S->actor[k].op],
             k, S->actor[k].pid, S->actor[k].round, RC_HANG_S);
        rc_dump_writes();
        if (getenv("PFT_HANG_GDB")) {       /* debugging aid: where is it stuck? */
          char cmd[128];
          snprintf(cmd, sizeof cmd, "gdb -p %d -batch -ex 'thread apply all bt' 2>&1 | grep '^#'",
                   S->actor[k].pid);
          fflush(stdout);
          if (system(cmd) != 0)
            diag("(gdb failed)");
        }
      }
    }
    if (hung) {
      int polls;
      __atomic_store_n(&S->check_req, 1, __ATOMIC_SEQ_CST);
      for (polls = 0; polls < 1000 && !__atomic_load_n(&S->checked, __ATOMIC_SEQ_CST); polls++)
        nanosleep(&ms, NULL);
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
      break;
    }
    nanosleep(&ms, NULL);
  }
  kill(-pid, SIGKILL);                      /* any child left behind */
  while (waitpid(-1, NULL, WNOHANG) > 0)    /* (we are their subreaper) */
    ;
  if (!hung && !(WIFEXITED(st) && WEXITSTATUS(st) == 0 && S->done)) {
    if (WIFEXITED(st) && WEXITSTATUS(st) == 3) {
      res->setup_fail++;
      diag("%s, region %d: setting up failed (the region or the canaries): %s",
           rc_class_names[cls], epoch, rc_errname(S->setup_err));
    } else {
      res->crashes++;
      diag("%s, region %d: the driver ended by %s %d in round %d", rc_class_names[cls], epoch,
           WIFSIGNALED(st) ? "signal" : "exit status",
           WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), S->round);
      rc_dump_writes();
    }
  }
  if (S->child_crashes) {
    res->crashes += S->child_crashes;
    diag("%s, region %d: %d child actor(s) died (%s %d)", rc_class_names[cls], epoch,
         S->child_crashes, WIFSIGNALED(S->child_status) ? "signal" : "exit status",
         WIFSIGNALED(S->child_status) ? WTERMSIG(S->child_status) : WEXITSTATUS(S->child_status));
  }
  res->calls += S->calls;
  res->ok += S->ok;
  for (k = 0; k < RC_NERRS; k++)
    res->errs[k] += S->errs[k];
  res->nbad += S->nbad;
  for (k = 0; k < S->nbad && k < RC_BADLOG; k++)
    diag("%s, region %d: invalid result: %s by actor %d in round %d returned %ld, errno %s "
         "(at most %lld: nr %d, nr2 %d, %s words, op 0x%08x)",
         rc_class_names[cls], epoch, rc_op_names[S->bad[k].op], S->bad[k].actor,
         S->bad[k].round, S->bad[k].ret, rc_errname(S->bad[k].err), S->bad[k].max,
         S->bad[k].nr, S->bad[k].nr2, S->bad[k].same ? "the same" : "two", S->bad[k].wop);
  if (S->checked) {
    res->completed++;
    res->canary_bad += S->canary_bad;
    res->guard_bad += S->guard_bad;
    res->heap_bad += S->heap_bad;
    res->geom_bad += S->geom_bad;
    res->adjacent += S->guards_adjacent;
  }
  if (S->done) {
    if (S->works_checked) {
      res->works_checked++;
      if (!S->works) {
        res->works_fail++;
        diag("%s, region %d: after the scribbles, wake counted %ld, the wait returned %ld "
             "(errno %s)", rc_class_names[cls], epoch, S->post_wake, S->post_wait,
             rc_errname(S->post_err));
      }
    }
    if (S->check_ret < 0) {
      res->check_bad++;
      diag("%s, region %d: pf_region_check: %s", rc_class_names[cls], epoch, S->check_why);
    }
  }
}

static void
rc_report(int cls, const struct rc_class_result *r)
{
  const char *n = rc_class_names[cls];
  diag("%s: %d regions, %ld calls: %ld counts, EAGAIN %ld, ETIMEDOUT %ld, EINTR %ld, "
       "ENOTRECOVERABLE %ld, ENOMEM %ld, EINVAL %ld; %d left the region inconsistent "
       "(pf_region_check); %d/%d canary areas adjacent to the mapping", n, r->runs, r->calls,
       r->ok, r->errs[0], r->errs[1], r->errs[2], r->errs[3], r->errs[4], r->errs[5],
       r->check_bad, r->adjacent, 2 * r->runs);
  ok(r->crashes == 0 && r->setup_fail == 0,
     "%s scribbles: no process crashed (no signal, no sanitizer report)", n);
  ok(r->hangs == 0, "%s scribbles: every call returned within %d s", n, RC_HANG_S);
  ok(r->nbad == 0 && r->calls > 0, "%s scribbles: every result valid (%ld calls)", n, r->calls);
  if (!ok(r->completed > 0 && r->canary_bad == 0 && r->guard_bad == 0 && r->heap_bad == 0,
          "%s scribbles: no write outside the table (canaries intact, %d/%d regions checked)",
          n, r->completed, r->runs))
    diag("    user area words changed: %d, canary pages changed: %d, heap canary: %d",
         r->canary_bad, r->guard_bad, r->heap_bad);
  ok(r->completed > 0 && r->geom_bad == 0, "%s scribbles: the handle's geometry is unchanged",
     n);
  if (cls == RC_HEADER)
    ok(r->works_checked > 0 && r->works_fail == 0,
       "header scribbles: the region still works (a wait woken by a wake counting 1), "
       "%d/%d regions", r->works_checked - r->works_fail, r->runs);
}

/* ---- (b) A named region's header ---------------------------------------------------- */

struct rc_hcase {
  const char *what;
  uint32_t off;
  int width;                        /* 4, 8; 0: ftruncate to val */
  uint64_t val;
  int w1, w2, w3;
};

#define RC_WRAP64 (~(uint64_t)63)       /* 2^64 - 64: an offset that wraps around */
static const struct rc_hcase rc_hcases[] = {
  { "magic garbage", 0, 4, 0x12345678u, EINVAL, EPROTO, ENOTRECOVERABLE },
  { "magic 0, its creator dead", 0, 4, 0, ENOTRECOVERABLE, 0, 0 },
  { "version 1 (process entries of 16 bytes, pids for liveness)", 4, 4, 1, EPROTO, 0, 0 },
  { "version 3", 4, 4, 3, EPROTO, 0, 0 },
  { "version 0xffffffff", 4, 4, 0xffffffffu, EPROTO, 0, 0 },
  { "endianness swapped", 8, 4, 0x04030201u, EPROTO, 0, 0 },
  { "header size 64", 12, 4, 64, EPROTO, 0, 0 },
  { "node size 72", 16, 4, 72, EPROTO, 0, 0 },
  { "bucket size 0", 20, 4, 0, EPROTO, 0, 0 },
  { "process entry size 0xffffffff", 24, 4, 0xffffffffu, EPROTO, 0, 0 },
  { "nbuckets 0", 32, 4, 0, ENOTRECOVERABLE, 0, 0 },
  { "nbuckets 3 (no power of two)", 32, 4, 3, ENOTRECOVERABLE, 0, 0 },
  { "nbuckets 2^17", 32, 4, 1u << 17, ENOTRECOVERABLE, 0, 0 },
  { "nbuckets 2^31", 32, 4, 1u << 31, ENOTRECOVERABLE, 0, 0 },
  { "nbuckets 64 (past the slots)", 32, 4, 64, ENOTRECOVERABLE, 0, 0 },
  { "nslots 0", 36, 4, 0, ENOTRECOVERABLE, 0, 0 },
  { "nslots 0xffffffff", 36, 4, 0xffffffffu, ENOTRECOVERABLE, 0, 0 },
  { "nslots 2^20 + 1", 36, 4, PF_RGN_MAX_SLOTS + 1, ENOTRECOVERABLE, 0, 0 },
  { "nslots 100 (past the user area's start)", 36, 4, 100, ENOTRECOVERABLE, 0, 0 },
  { "nprocs 0", 40, 4, 0, ENOTRECOVERABLE, 0, 0 },
  { "nprocs 65536", 40, 4, 65536, ENOTRECOVERABLE, 0, 0 },
  { "nprocs 0xffffffff", 40, 4, 0xffffffffu, ENOTRECOVERABLE, 0, 0 },
  { "nprocs 64 (over the buckets)", 40, 4, 64, ENOTRECOVERABLE, 0, 0 },
  { "kind: an attach table", 44, 4, PF_RGN_ATTACH, EINVAL, 0, 0 },
  { "total 0", 48, 8, 0, ENOTRECOVERABLE, 0, 0 },
  { "total 2^63", 48, 8, (uint64_t)1 << 63, ENOTRECOVERABLE, 0, 0 },
  { "procs_off 0", 56, 8, 0, ENOTRECOVERABLE, 0, 0 },
  { "procs_off 100 (misaligned)", 56, 8, 100, ENOTRECOVERABLE, 0, 0 },
  { "procs_off 2^64 - 64 (wraps)", 56, 8, RC_WRAP64, ENOTRECOVERABLE, 0, 0 },
  { "buckets_off 64 (over the process table)", 64, 8, 64, ENOTRECOVERABLE, 0, 0 },
  { "buckets_off 2^64 - 64 (wraps)", 64, 8, RC_WRAP64, ENOTRECOVERABLE, 0, 0 },
  { "buckets_off 2^63", 64, 8, (uint64_t)1 << 63, ENOTRECOVERABLE, 0, 0 },
  { "slots_off 128 (over the buckets)", 72, 8, 128, ENOTRECOVERABLE, 0, 0 },
  { "slots_off 2^64 - 64 (wraps)", 72, 8, RC_WRAP64, ENOTRECOVERABLE, 0, 0 },
  { "slots_off 2^64 - 4096 (wraps)", 72, 8, ~(uint64_t)4095, ENOTRECOVERABLE, 0, 0 },
  { "user_off 0", 80, 8, 0, ENOTRECOVERABLE, 0, 0 },
  { "user_off 2^64 - 4096", 80, 8, ~(uint64_t)4095, ENOTRECOVERABLE, 0, 0 },
  { "user_size 2^64 - 1", 88, 8, ~(uint64_t)0, ENOTRECOVERABLE, 0, 0 },
  { "user_size 0 (no word: a span that would wrap)", 88, 8, 0, ENOTRECOVERABLE, 0, 0 },
  { "user_size 3", 88, 8, 3, ENOTRECOVERABLE, 0, 0 },
  { "liveness mechanism 0", 116, 4, 0, EPROTO, 0, 0 },
  { "liveness mechanism 7", 116, 4, 7, EPROTO, 0, 0 },
  { "the object grown by a page", 0, 0, 1, ENOTRECOVERABLE, 0, 0 },
  { "the object cut by a page", 0, 0, 2, ENOTRECOVERABLE, 0, 0 },
};
#define RC_NHCASES ((int)(sizeof rc_hcases / sizeof rc_hcases[0]))

#define RC_OPENED 255                 /* the child's exit status when the open worked */
#define RC_ERRNO_RANGE 254

static int
rc_open_child(const char *name)
{
  pid_t pid;
  int st;
  fflush(stdout);
  pid = fork();
  if (pid < 0)
    sysbail("fork");
  if (pid == 0) {
    pfutex_region_t *r;
    alarm(15);
    errno = 0;
    r = pfutex_region_open(name, 0, O_RDWR, 0);
    _exit(r ? RC_OPENED : (errno > 0 && errno < RC_ERRNO_RANGE ? errno : RC_ERRNO_RANGE));
  }
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR)
      sysbail("waitpid");
  return st;
}

static void
rc_named(void)
{
  char name[64];
  pfutex_region_attr_t attr;
  struct pf_rgn_hdr orig;
  struct stat sb;
  unsigned char *m;
  size_t size;
  pid_t pid, dead;
  int fd, st, i;

  snprintf(name, sizeof name, "/pft-corrupt-%d", (int)getpid());
  shm_unlink(name);   /* a killed earlier run with this pid */
  memset(&attr, 0, sizeof attr);
  attr.slots = RC_SLOTS;
  attr.buckets = RC_BUCKETS;
  attr.procs = RC_PROCS;
  /* Created by a child, so its init_pid is a dead process's. */
  fflush(stdout);
  pid = fork();
  if (pid < 0)
    sysbail("fork");
  if (pid == 0) {
    pfutex_region_t *r = pfutex_region_open_attr(name, RC_USER, O_RDWR | O_CREAT | O_EXCL, 0600,
                                                 &attr);
    _exit(r && pfutex_region_close(r) == 0 ? 0 : 1);
  }
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR)
      sysbail("waitpid");
  dead = pid;
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    pfutex_region_unlink(name);
    bail("could not create the named region %s", name);
  }
  if ((fd = shm_open(name, O_RDWR, 0)) < 0 || fstat(fd, &sb) != 0) {
    pfutex_region_unlink(name);
    sysbail("shm_open %s", name);
  }
  size = (size_t)sb.st_size;
  m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    pfutex_region_unlink(name);
    sysbail("mmap");
  }
  memcpy(&orig, m, sizeof orig);
  (void)dead;

  st = rc_open_child(name);
  ok(WIFEXITED(st) && WEXITSTATUS(st) == RC_OPENED, "named region: the intact header opens");

  for (i = 0; i < RC_NHCASES; i++) {
    int got, good;
    memcpy(m, &orig, sizeof orig);
    if (rc_hcases[i].width == 4) {
      uint32_t v = (uint32_t)rc_hcases[i].val;
      memcpy(m + rc_hcases[i].off, &v, 4);
      if (rc_hcases[i].off == 0 && v == 0)
        ((struct pf_rgn_hdr *)(void *)m)->init_pid = (uint32_t)dead;
    } else if (rc_hcases[i].width == 8) {
      memcpy(m + rc_hcases[i].off, &rc_hcases[i].val, 8);
    } else if (ftruncate(fd, (off_t)(rc_hcases[i].val == 1 ? size + 4096 : size - 4096)) != 0) {
      sysbail("ftruncate");
    }
    st = rc_open_child(name);
    got = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    good = got > 0 && got < RC_ERRNO_RANGE
           && (got == rc_hcases[i].w1 || got == rc_hcases[i].w2 || got == rc_hcases[i].w3);
    if (!ok(good, "named region, %s: open fails with %s%s%s%s%s", rc_hcases[i].what,
            rc_errname(rc_hcases[i].w1), rc_hcases[i].w2 ? " or " : "",
            rc_hcases[i].w2 ? rc_errname(rc_hcases[i].w2) : "", rc_hcases[i].w3 ? " or " : "",
            rc_hcases[i].w3 ? rc_errname(rc_hcases[i].w3) : "")) {
      if (WIFSIGNALED(st))
        diag("    the opener was killed by signal %d", WTERMSIG(st));
      else if (got == RC_OPENED)
        diag("    it opened");
      else
        diag("    errno %s", got == RC_ERRNO_RANGE ? "(out of range)" : rc_errname(got));
    }
    if (rc_hcases[i].width == 0 && ftruncate(fd, (off_t)size) != 0)
      sysbail("ftruncate");
  }
  memcpy(m, &orig, sizeof orig);
  st = rc_open_child(name);
  ok(WIFEXITED(st) && WEXITSTATUS(st) == RC_OPENED, "named region: the restored header opens again");
  munmap(m, size);
  close(fd);
  pfutex_region_unlink(name);
}

#define RC_NAMED_TESTS (RC_NHCASES + 2)

int
main(void)
{
  struct rc_class_result res[RC_NCLASSES];
  const char *env = getenv("PFT_SEED");
  uint64_t seed;
  int cls, epoch;

  PFT_SKIP_UNDER_TSAN();
  seed = env && *env ? strtoull(env, NULL, 0)
                     : (uint64_t)pft_now_ns() ^ ((uint64_t)getpid() << 32);
  plan(RC_NCLASSES * 5 + 1 + RC_NAMED_TESTS);
  pft_watchdog(150);
  diag("seed %llu (PFT_SEED=%llu replays it); backend %s", (unsigned long long)seed,
       (unsigned long long)seed, pfutex_backend() ? pfutex_backend() : "(none)");
#ifdef PR_SET_CHILD_SUBREAPER
  prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
  S = mmap(NULL, sizeof *S, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (S == MAP_FAILED)
    sysbail("mmap");
  memset(res, 0, sizeof res);
  for (cls = 0; cls < RC_NCLASSES; cls++) {
    for (epoch = 0; epoch < RC_EPOCHS; epoch++) {
      rc_run(cls, epoch, seed, &res[cls]);
      if (res[cls].hangs && epoch + 1 < RC_EPOCHS) {
        diag("%s: a call hung: the class's other %d region(s) are not run (time)",
             rc_class_names[cls], RC_EPOCHS - epoch - 1);
        break;
      }
    }
    rc_report(cls, &res[cls]);
  }
  rc_named();
  return 0;
}
#endif /* !_WIN32 */
