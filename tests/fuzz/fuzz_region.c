/* fuzz_region: a region's memory is untrusted input (DESIGN invariant 7);
 * fuzz bytes are written over it under the region code.
 *
 * Each input: a named region with a small table (geometry from the input:
 * 1-16 slots, 1-8 buckets, 1-8 process entries) is created; then a list of
 * scribbles from the input is written over its header, process table,
 * buckets (lock, incoming, waiters, head, tail), slots or anywhere in the
 * table: raw bytes, or values that look meaningful (references in and just
 * out of range, node states, this process's lock id, dead ones, extremes).
 * Then every op runs on the region's words (shared, so on the region's
 * table): WAIT with a zero timeout and with a differing value, WAIT_BITSET
 * with a passed deadline, WAKE, WAKE_BITSET, REQUEUE, CMP_REQUEUE (value
 * equal and not), WAKE_OP, and the clean calls; then the white-box check
 * and recovery (pf_region_check: every bucket locked, taken over and
 * rebuilt when needed); then the region is opened again by name (the
 * header checked as a stranger's: pf_layout_check) and, when that
 * succeeds, used and checked through the new handle.  Nothing may crash,
 * hang or touch memory outside the region (ASan), every result must be one
 * the API allows, and the first handle's geometry must not move.
 *
 * What the harness keeps out of the fuzz's reach (waits the design makes
 * on purpose, which no input must be able to turn into a stuck run):
 *  - a process entry naming a live process other than this one: a lock
 *    held by a live process is waited for (up to a second, then taken
 *    over): every other entry's pid that is alive is replaced by a pid that
 *    cannot exist, and this process's own entry is restored;
 *  - a header whose magic is 0 (an object still being created) with a live
 *    or unset creator: opening it waits up to 5 s for the creator: the
 *    creator pid is made one that cannot exist;
 *  - under emu:sysv without a SysV IPC namespace of its own (unshare needs
 *    root): a slot's semaphore set id is whatever the fuzz wrote, and a wake
 *    would post another program's semaphore; then every slot's set id is
 *    made -1 after the scribbles (.ci/fuzz and the replay try
 *    unshare(CLONE_NEWIPC) first, so as root the ids stay fuzzed).
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "region/internal.h"
#include "pfutex.h"
#include "fuzz.h"

#if defined(PF_HAVE_EMU) && !defined(_WIN32)

#define FZ_DEAD_PID 0x3ffffff0u         /* above Linux's PID_MAX_LIMIT (2^22) */

static char name[64];
static int protect_park;                /* see the top of the file */
static pid_t self;

static int
valid_err(int e, int wait_op, int may_enosys)
{
  return e == ENOTRECOVERABLE || e == ENOMEM || e == EINVAL || (wait_op && (e == EAGAIN
         || e == ETIMEDOUT || e == EINTR)) || (may_enosys && e == ENOSYS);
}

/* A result: a count in [0, max], or -1 with an allowed errno. */
static void
check(const char *what, long ret, int err, long max, int wait_op, int may_enosys)
{
  if (ret == -1 ? !valid_err(err, wait_op, may_enosys) : (ret < 0 || ret > max))
    fz_fail("%s: %ld (errno %d %s)", what, ret, err, ret == -1 ? strerror(err) : "");
}

#define CALL(what, call, max, wait_op, may_enosys) \
  do { long r_; errno = 0; r_ = (call); check((what), r_, errno, (max), (wait_op), (may_enosys)); } while (0)

/* Every op on the words of region rg. */
static void
run_ops(struct pf_region *rg, struct fz_in *in)
{
  uint32_t *u = pfutex_region_addr(rg);
  size_t n = pfutex_region_size(rg) / 4;
  uint32_t *w0, *w1, *wl;
  struct timespec zero = { 0, 0 }, past;
  int nr = 1 + fz_u8(in) % 4, nr2 = fz_u8(in) % 4;
  uint32_t wakeop = fz_u32(in);
  int k;

  if (n < 4)
    return;                             /* a header that says so: no words to use */
  if ((uintptr_t)u % 64) {
    fz_fail("the user area of a region is misaligned (%p)", (void *)u);
    return;
  }
  w0 = &u[0];
  w1 = &u[1 + fz_u8(in) % 3];
  wl = &u[n - 1];
  clock_gettime(CLOCK_MONOTONIC, &past);
  past.tv_sec -= 1;
  *w0 = fz_u8(in);
  for (k = 0; k < 2; k++) {
    uint32_t *a = k ? wl : w0, *b = k ? w0 : w1;
    CALL("WAIT zero timeout", pfutex(a, 0, *a, &zero, NULL, 0), 0, 1, 0);
    CALL("WAIT mismatch", pfutex(a, 0, *a + 1, NULL, NULL, 0), 0, 1, 0);
    CALL("WAIT_BITSET passed deadline", pfutex(a, 9, *a, &past, NULL, 1u << (nr2 * 8)), 0, 1, 0);
    CALL("WAKE", pfutex(a, 1, (uint32_t)nr, NULL, NULL, 0), nr, 0, 0);
    CALL("WAKE_BITSET", pfutex(a, 10, (uint32_t)nr, NULL, NULL, 2), nr, 0, 0);
    CALL("REQUEUE", pfutex(a, 3, (uint32_t)nr, (const struct timespec *)(uintptr_t)nr2, b, 0),
         nr + nr2, 0, 0);
    CALL("CMP_REQUEUE equal", pfutex(a, 4, (uint32_t)nr, (const struct timespec *)(uintptr_t)nr2,
                                     b, *a), nr + nr2, 0, 0);
    CALL("CMP_REQUEUE differs", pfutex(a, 4, 1, (const struct timespec *)(uintptr_t)1, b, *a + 1),
         2, 1, 0);
    CALL("WAKE_OP", pfutex(a, 5, (uint32_t)nr, (const struct timespec *)(uintptr_t)nr2, b, wakeop),
         nr + (nr2 ? nr2 : 1), 0, 1);
    CALL("pfutex_wait", pfutex_wait(a, *a, 1, 0, &past, PFUTEX_CLOCK_MONOTONIC), 0, 1, 0);
    CALL("pfutex_wake", pfutex_wake(a, ~0u, nr, 0), nr, 0, 0);
    CALL("pfutex_requeue", pfutex_requeue(a, b, nr, nr2, 0), nr + nr2, 0, 0);
    CALL("pfutex_cmp_requeue", pfutex_cmp_requeue(a, *a, b, nr, nr2, 0), nr + nr2, 1, 0);
    CALL("pfutex_wake_op", pfutex_wake_op(a, b, nr, nr2, wakeop, 0), nr + nr2, 0, 1);
  }
}

static void
region_check(struct pf_region *rg, const char *which)
{
  struct pf_region_stats st;
  const char *why = "";
  int r = pf_region_check(rg, &st, &why);
  if (r != 0 && r != -ENOTRECOVERABLE)
    fz_fail("pf_region_check (%s): %d (%s)", which, r, why);
}

/* What the design waits for on purpose, out of reach (top of the file). */
static void
sanitize(struct pf_region *rg, const struct pf_rgn_proc *mine, uint32_t my_entry)
{
  struct pf_rgn_hdr *h = rg->att->hdr;
  uint32_t i;
  for (i = 0; i < rg->att->nprocs; i++) {
    struct pf_rgn_proc *p = &rg->att->procs[i];
    uint32_t pid = p->pid & ~PF_RGN_CLAIMING;
    if (i == my_entry)
      *p = *mine;
    else if (pid != 0 && (pid == (uint32_t)self || kill((pid_t)pid, 0) == 0 || errno == EPERM))
      p->pid = (p->pid & PF_RGN_CLAIMING) | FZ_DEAD_PID;
  }
  if (h->magic == 0)
    h->init_pid = FZ_DEAD_PID;
  if (protect_park)
    for (i = 0; i < rg->att->tab.nslots; i++)
      rg->att->tab.slots[i].park.id = -1;
}

/* A value that looks meaningful to the region code. */
static uint32_t
smart_value(struct pf_region *rg, struct fz_in *in)
{
  uint8_t k = fz_u8(in);
  switch (k % 10) {
  case 0: return (uint32_t)(fz_u8(in) % (rg->att->tab.nslots + 3));       /* references */
  case 1: return (uint32_t)(fz_u8(in) % 6);                          /* states, flags */
  case 2: return rg->att->me;                                             /* our lock id */
  case 3: return ((uint32_t)fz_u8(in) << 16) | (1u + fz_u8(in) % (rg->att->nprocs + 1)); /* ids */
  case 4: return 0xffffffffu;
  case 5: return 0x80000000u | (uint32_t)self;
  case 6: return (uint32_t)self;
  case 7: return (uint32_t)(fz_u8(in) % (rg->att->tab.nbuckets + 2));     /* bucket indices */
  default: return fz_u32(in);
  }
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
  const char *b;
  (void)argc;
  (void)argv;
  self = getpid();
  snprintf(name, sizeof name, "/pfutex-fuzz-region-%ld", (long)self);
  /* The backend starts after this: its SysV sets, and every set id a
   * fuzzed slot names, are then in an IPC namespace of our own. */
#ifdef CLONE_NEWIPC
  protect_park = unshare(CLONE_NEWIPC) != 0;
#else
  protect_park = 1;
#endif
  b = pfutex_backend();
  if (!b || strcmp(b, "emu:sysv") != 0)
    protect_park = 0;
  if (!fz_replay)
    fprintf(stderr, "fuzz_region: backend %s%s\n", b ? b : "none",
            protect_park ? " (no IPC namespace: slot set ids not fuzzed)" : "");
  return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct fz_in in = { data, size };
  pfutex_region_attr_t attr;
  struct pf_region *rg, *rg2, before;
  struct pf_rgn_att before_att;
  struct pf_rgn_proc mine;
  uint32_t my_entry;
  uint64_t tab_len;
  int nscribbles, i;

  if (!self)
    LLVMFuzzerInitialize(NULL, NULL);
  memset(&attr, 0, sizeof attr);
  attr.slots = 1 + fz_u8(&in) % 16;
  attr.buckets = 1u << (fz_u8(&in) % 4);
  attr.procs = 1 + fz_u8(&in) % 8;
  shm_unlink(name);
  rg = pfutex_region_open_attr(name, 64, O_RDWR | O_CREAT | O_EXCL, 0600, &attr);
  if (!rg) {
    fz_fail("pfutex_region_open_attr: %s", strerror(errno));
    return 0;
  }
  before = *rg;
  before_att = *rg->att;
  my_entry = (rg->att->me & 0xffffu) - 1;
  mine = my_entry < rg->att->nprocs ? rg->att->procs[my_entry] : (struct pf_rgn_proc){ 0, 0, 0, 0, 0, 0, { 0 } };
  tab_len = rg->att->hdr->user_off;

  /* the scribbles */
  nscribbles = fz_u8(&in) % 16;
  for (i = 0; i < nscribbles && in.n; i++) {
    uint8_t t = fz_u8(&in);
    uint16_t off = fz_u16(&in);
    uint64_t base, len;
    switch (t % 5) {
    case 0: base = 0; len = sizeof(struct pf_rgn_hdr); break;
    case 1: base = (uint64_t)((char *)before_att.procs - before.map); len = rg->att->nprocs * sizeof(struct pf_rgn_proc); break;
    case 2: base = before_att.tab.buckets ? (uint64_t)((char *)before_att.tab.buckets - before.map) : 0;
            len = rg->att->tab.nbuckets * sizeof(struct pf_bucket); break;
    case 3: base = (uint64_t)((char *)before_att.tab.slots - before.map);
            len = rg->att->tab.nslots * sizeof(struct pf_node); break;
    default: base = 0; len = tab_len; break;
    }
    if (t & 0x80) {                     /* raw bytes */
      uint8_t n = 1 + fz_u8(&in) % 8, j;
      uint64_t o = base + off % len;
      for (j = 0; j < n && o + j < base + len; j++)
        ((uint8_t *)before.map)[o + j] = fz_u8(&in);
    } else {                            /* a meaningful 32-bit value, aligned */
      uint64_t o = base + (off % len & ~(uint64_t)3);
      if (o + 4 <= base + len)
        *(uint32_t *)(void *)(before.map + o) = smart_value(rg, &in);
    }
  }
  sanitize(rg, &mine, my_entry);

  run_ops(rg, &in);
  region_check(rg, "after the ops");
  if (memcmp(&before_att.tab, &rg->att->tab, sizeof before_att.tab) != 0 || before.ks.lo != rg->ks.lo
      || before.ks.span != rg->ks.span || before_att.procs != rg->att->procs || before_att.nprocs != rg->att->nprocs
      || before.user != rg->user || before.user_len != rg->user_len)
    fz_fail("the handle's geometry moved");

  /* a stranger's view: the header checked again */
  errno = 0;
  rg2 = pfutex_region_open(name, 0, O_RDWR, 0);
  if (rg2) {
    static uint32_t outside;
    /* a word of no region is never taken for one of this region's */
    if (pf_region_find(&outside) != NULL)
      fz_fail("a word outside every region is found in one (user size %llu)",
              (unsigned long long)pfutex_region_size(rg2));
    run_ops(rg2, &in);
    region_check(rg2, "second handle");
    if (pfutex_region_close(rg2) != 0)
      fz_fail("pfutex_region_close (second handle): %s", strerror(errno));
  } else if (errno != EPROTO && errno != ENOTRECOVERABLE && errno != EINVAL && errno != ENOMEM) {
    fz_fail("reopen: %s", strerror(errno));
  }
  if (pfutex_region_close(rg) != 0)
    fz_fail("pfutex_region_close: %s", strerror(errno));
  shm_unlink(name);
  return 0;
}

const char *
fz_unsupported(void)
{
  return NULL;
}

#else

FZ_NO_TARGET

const char *
fz_unsupported(void)
{
  return "regions' tables need an emulated backend and POSIX shared memory";
}

#endif
