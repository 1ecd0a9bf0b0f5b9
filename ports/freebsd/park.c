/* park.c - the emulation's FreeBSD park port: _umtx_op(2) on the park word.
 * "Sleep while this word is 0", like ports/linux/park.c: private parks
 * with UMTX_OP_WAIT_UINT_PRIVATE / UMTX_OP_WAKE_PRIVATE (the process's
 * own sleep queue), a region's slot with UMTX_OP_WAIT_UINT / UMTX_OP_WAKE,
 * which FreeBSD keys by the shared mapping's backing object, so a waker in
 * another process finds the sleeper.
 *
 * FreeBSD's quirks, normalised here (sources: sys/kern/kern_umtx.c,
 * lib/libc/sys/_umtx_op.2, sys/sys/umtx.h, sys/sys/_umtx.h):
 *   - A wait whose word does not match returns 0, as a wake does; and a
 *     wake meant for an earlier sleeper on the same word (a previous
 *     unparker's, late) also returns 0.  0 therefore says nothing: the
 *     word is re-read, and only a nonzero word is the token.
 *   - Wakes return 0, no count: the port needs none (one sleeper per word).
 *   - Deadlines are absolute on the deadline's own clock: struct _umtx_time
 *     with UMTX_ABSTIME and _clockid CLOCK_MONOTONIC or CLOCK_REALTIME, its
 *     size cast into uaddr (_umtx_op.2, "Timeout parameter").  No
 *     recomputation per loop.  ETIMEDOUT is checked against the clock
 *     before it is believed.
 *   - UMTX_OP_WAIT is "not restartable": a handler always ends it with
 *     EINTR, timed or not (do_wait() turns ERESTART into EINTR), which is
 *     what the engine needs (wait.c (F)): no artificial deadline for
 *     untimed parks, unlike the Linux port.
 *   - Errors come as -1/errno; errno is kept as the caller had it (parks
 *     run in signal handlers too).
 * Not confirmed from FreeBSD's sources: whether a stop and continue
 * (SIGSTOP) without a handler ends a wait with EINTR; the engine accepts
 * a spurious -EINTR.
 *
 * -DPF_PORT_WRONG (the deliberately wrong variant, for the shim's suite
 * run): a region's park uses the _PRIVATE ops too, so a waker in another
 * process wakes nobody. */
#include "port.h"

#ifdef PF_SHIM
# include "shim.h"                 /* tests/shims/freebsd: _umtx_op on Linux */
# define PF_PORT_VAR  pf_port_freebsd_shim
# define PF_PORT_NAME "freebsd-shim"
#else
# include <sys/types.h>
# include <sys/umtx.h>
# define PF_PORT_VAR  pf_port_freebsd
# define PF_PORT_NAME "freebsd"
#endif

#include <errno.h>
#include <stdint.h>
#include <time.h>

#ifdef PF_PORT_WRONG
# define PF_UMTX_WAIT(shared) UMTX_OP_WAIT_UINT_PRIVATE
# define PF_UMTX_WAKE(shared) UMTX_OP_WAKE_PRIVATE
#else
# define PF_UMTX_WAIT(shared) ((shared) ? UMTX_OP_WAIT_UINT : UMTX_OP_WAIT_UINT_PRIVATE)
# define PF_UMTX_WAKE(shared) ((shared) ? UMTX_OP_WAKE : UMTX_OP_WAKE_PRIVATE)
#endif

static int
pf_umtx_park(struct pf_parker *p, struct pf_park *k, int shared, const struct pf_deadline *dl)
{
  struct _umtx_time t;
  void *size = NULL, *tp = NULL;
  int op = PF_UMTX_WAIT(shared), saved = errno, ret;
  (void)p;
  if (dl) {
    t._timeout = dl->abs;
    t._flags = UMTX_ABSTIME;
    t._clockid = dl->clock == PFUTEX_CLOCK_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC;
    size = (void *)(uintptr_t)sizeof t;
    tp = &t;
  }
  for (;;) {
    if (AO_int_load_acquire(&k->word)) {
      ret = 0;
      break;
    }
    if (_umtx_op(&k->word, op, 0, size, tp) == 0)
      continue;               /* woken, a mismatch, or a stale wake: re-read */
    if (AO_int_load_acquire(&k->word)) {
      ret = 0;                /* the token came meanwhile: woken wins */
      break;
    }
    ret = -errno;
    if (ret == -ETIMEDOUT && dl) {
      struct timespec left;
      if (pf_deadline_left(dl, &left) == 0)
        continue;             /* not passed on the deadline's clock (set back?) */
    }
    break;                    /* -ETIMEDOUT; -EINTR: a handler ran, the engine
                                 decides; EFAULT, EINVAL: not for a word of ours */
  }
  errno = saved;
  return ret;
}

/* The release store is the last access to *k; the wake then only hashes
 * the address (a stale one causes at worst an early return, which every
 * park absorbs). */
static void
pf_umtx_unpark(struct pf_park *k, int shared)
{
  int saved = errno;
  uint32_t *word = &k->word;
  AO_int_store_release(&k->word, 1);
  (void)_umtx_op(word, PF_UMTX_WAKE(shared), 1, NULL, NULL);
  errno = saved;
}

static void
pf_umtx_collect(struct pf_parker *p, struct pf_park *k, int shared)
{
  pf_park_word_collect(pf_umtx_park, p, k, shared);
}

/* Which object a shared op's word maps, if any (ports/freebsd/objid.c;
 * the shim build asks through the shim's switch,
 * tests/shims/freebsd/shim.h). */
#ifdef PF_SHIM
# define PF_FREEBSD_OBJID pf_shim_freebsd_object_id
#else
# define PF_FREEBSD_OBJID pf_freebsd_object_id
int pf_freebsd_object_id(const void *p, struct pf_os_objid *id);
#endif

const struct pf_port PF_PORT_VAR = {
  .name = PF_PORT_NAME,
  .gen = &pf_park_word_gen,
  .init = pf_park_word_init,
  .prepare = pf_park_word_prepare,
  .park = pf_umtx_park,
  .unpark = pf_umtx_unpark,
  .collect = pf_umtx_collect,
  /* The whole map is copied out per op (FreeBSD has no per-address query):
   * the cost of a shared op outside regions here (doc/shared-futexes.md). */
  .object_id = PF_FREEBSD_OBJID,
};
