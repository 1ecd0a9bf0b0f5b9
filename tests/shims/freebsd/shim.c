/* shim.c - a model of FreeBSD's _umtx_op(2) simple waits and wakes on
 * Linux futexes, for the FreeBSD port's test build (shim.h).
 *
 * What it models, and where each fact comes from (freebsd/freebsd-src):
 *   - UMTX_OP_WAIT_UINT[_PRIVATE] compares the 32-bit word at obj with val
 *     and sleeps while they are equal.  A mismatch is not an error: do_wait()
 *     (sys/kern/kern_umtx.c) skips the sleep and returns 0.  The word is
 *     read as a u_int and widened, so a val above 32 bits never matches.
 *   - Wakes return 0, never a count (kern_umtx_wake(); _umtx_op.2 RETURN
 *     VALUES: "all requests ... will return zero").  val is the number to
 *     wake (INT_MAX: all); umtxq_signal_queue() wakes one even for val <= 0.
 *   - Keys: the _PRIVATE ops "unconditionally select the process-private
 *     sleep queue" (_umtx_op.2); the others key a shared mapping by its
 *     backing object (umtx_key_get(), AUTO_SHARE), so processes sharing
 *     memory meet.  Here: _PRIVATE -> a FUTEX_PRIVATE_FLAG futex (keyed per
 *     process), the others -> a shared Linux futex.  Not modelled: on a
 *     MAP_PRIVATE mapping FreeBSD's AUTO_SHARE picks the private queue, so
 *     a WAIT_UINT there meets a WAKE_PRIVATE; Linux keeps the two apart
 *     (the port never mixes them).
 *   - Timeout: uaddr2 points to a struct timespec or a struct _umtx_time,
 *     told apart by uaddr, the structure's size cast to a pointer
 *     (_umtx_op.2 "Timeout parameter"; umtx_copyin_umtx_time(): a size up
 *     to sizeof(struct timespec) is a bare timespec, relative, on
 *     CLOCK_REALTIME).  UMTX_ABSTIME: _timeout is a deadline on _clockid;
 *     else relative, made a deadline on _clockid at the call
 *     (umtx_abs_timeout_init()).  tv_sec < 0 or tv_nsec outside [0, 1e9):
 *     EINVAL (umtx_copyin_umtx_time(), _umtx_op.2 ERRORS).  Expiry:
 *     ETIMEDOUT (umtxq_sleep() turns EWOULDBLOCK of an absolute sleep into
 *     ETIMEDOUT).  Clocks modelled: CLOCK_REALTIME and CLOCK_MONOTONIC (host
 *     ids); any other is EINVAL here (FreeBSD accepts more).
 *   - Signals: "The request is not restartable.  An unblocked signal
 *     delivered during the wait always results in sleep interruption and
 *     EINTR error" (_umtx_op.2, UMTX_OP_WAIT; do_wait() turns ERESTART into
 *     EINTR, timed or not).  A Linux futex wait with a timeout ends with
 *     EINTR after any handler, SA_RESTART or not; an untimed one would be
 *     restarted, so untimed waits sleep with a deadline no machine reaches.
 *   - Errors: -1 and errno (_umtx_op.2 RETURN VALUES); EINVAL for an op
 *     the shim does not model (FreeBSD: EINVAL for an invalid op).
 *   - Early returns: a wake for any sleeper on the word wakes this one
 *     too, so 0 does not mean the word changed: the port's park words are
 *     reused, and a waker's UMTX_OP_WAKE can arrive after its sleeper left
 *     and a new one sleeps.  The shim makes every Nth wait of the process
 *     return 0 at once (pf_shim_freebsd_spurious), so the port's loop runs.
 * Not modelled: EFAULT for unmapped memory beyond what Linux reports; the
 * long (UMTX_OP_WAIT) variant; ops other than the four above. */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include "shim.h"
#include "../procmaps.h"
#include "sys.h"
#include "os.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PF_SHIM_NSEC 1000000000L

static volatile AO_t pf_shim_fbsd_every = (AO_t)-1;   /* -1: not read yet */
static volatile AO_t pf_shim_fbsd_waits;

void
pf_shim_freebsd_spurious(unsigned int every)
{
  AO_store(&pf_shim_fbsd_every, (AO_t)every);
}

/* Is this wait the one that returns early? */
static int
pf_shim_fbsd_spurious_now(void)
{
  AO_t every = AO_load(&pf_shim_fbsd_every);
  if (every == (AO_t)-1) {
    const char *s = getenv("PF_SHIM_FREEBSD_SPURIOUS");
    every = s && *s ? (AO_t)strtoul(s, NULL, 10) : 5;
    AO_store(&pf_shim_fbsd_every, every);
  }
  return every != 0 && (AO_fetch_and_add1(&pf_shim_fbsd_waits) + 1) % every == 0;
}

static int
pf_shim_fbsd_fail(int err)
{
  errno = err;
  return -1;
}

static int
pf_shim_fbsd_wait(uint32_t *obj, unsigned long val, void *uaddr, void *uaddr2, int private)
{
  /* No timeout: a deadline no machine reaches (2^31 s of CLOCK_MONOTONIC),
   * so that a handler ends the sleep with EINTR (see above). */
  struct timespec abs = { 0x7fffffff, 0 };
  int op = PF_OP_WAIT_BITSET | (private ? PF_OP_PRIVATE_FLAG : 0);
  long r;

  if (uaddr2) {
    struct _umtx_time t;
    size_t size = (size_t)(uintptr_t)uaddr;
    if (size <= sizeof(struct timespec)) {
      t._timeout = *(const struct timespec *)uaddr2;
      t._flags = 0;
      t._clockid = CLOCK_REALTIME;
    } else {
      t = *(const struct _umtx_time *)uaddr2;
    }
    if (t._timeout.tv_sec < 0 || t._timeout.tv_nsec < 0 || t._timeout.tv_nsec >= PF_SHIM_NSEC)
      return pf_shim_fbsd_fail(EINVAL);
    if (t._clockid != CLOCK_REALTIME && t._clockid != CLOCK_MONOTONIC)
      return pf_shim_fbsd_fail(EINVAL);
    abs = t._timeout;
    if (!(t._flags & UMTX_ABSTIME)) {
      struct timespec now;
      clock_gettime((clockid_t)t._clockid, &now);
      abs.tv_sec += now.tv_sec;
      abs.tv_nsec += now.tv_nsec;
      if (abs.tv_nsec >= PF_SHIM_NSEC) {
        abs.tv_nsec -= PF_SHIM_NSEC;
        abs.tv_sec++;
      }
    }
    if (t._clockid == CLOCK_REALTIME)
      op |= PF_OP_CLOCK_REALTIME;
  }
  if (val > UINT32_MAX)
    return 0;                 /* the widened u_int never equals it: no sleep */
  if (pf_shim_fbsd_spurious_now() && AO_int_load((volatile unsigned int *)obj) == (uint32_t)val)
    return 0;                 /* a stale wake: 0, the word unchanged */
  r = pf_linux_futex(obj, op, (uint32_t)val, &abs, 0, NULL, PFUTEX_BITSET_MATCH_ANY);
  if (r == 0 || r == -EAGAIN)
    return 0;                 /* woken, or the word did not match: both 0 */
  return pf_shim_fbsd_fail((int)-r);   /* ETIMEDOUT, EINTR, EFAULT, EINVAL */
}

static int
pf_shim_fbsd_wake(uint32_t *obj, unsigned long val, int private)
{
  /* kern_umtx_wake(..., int n_wake, ...): val is narrowed to int; the
   * queue walk wakes one before it compares, as Linux's FUTEX_WAKE does. */
  int n = (int)(unsigned int)val;
  long r = pf_linux_futex(obj, PF_OP_WAKE | (private ? PF_OP_PRIVATE_FLAG : 0),
                          (uint32_t)n, NULL, 0, NULL, 0);
  if (r < 0)
    return pf_shim_fbsd_fail((int)-r);
  return 0;                   /* no count */
}

/* ---- The object identity calls (shim.h says what is modelled) ------------ */

static volatile AO_t pf_shim_fbsd_counts[PF_SHIM_FBSD_NCOUNT];

unsigned long
pf_shim_freebsd_count(int kind)
{
  return (unsigned long)AO_load(&pf_shim_fbsd_counts[kind]);
}

/* How FreeBSD would show a Linux mapping (shim.h). */
static void
pf_shim_fbsd_record(const struct pf_shim_map *m, struct kinfo_vmentry *k)
{
  int file = m->ino != 0 && m->dev != 1 && strncmp(m->path, "/dev/shm/", 9) != 0;
  size_t n = strlen(m->path);
  memset(k, 0, sizeof *k);
  k->kve_start = m->lo;
  k->kve_end = m->hi;
  k->kve_offset = m->off;
  k->kve_protection = pf_shim_maps_prot(m);
  if (m->perms[3] != 's')
    k->kve_flags |= KVME_FLAG_COW;
  if (file) {
    k->kve_type = KVME_TYPE_VNODE;
    k->kve_status = KF_ATTR_VALID;
    k->kve_vn_fileid = m->ino;
    k->kve_vn_fsid = m->dev;
  } else {
    k->kve_type = m->ino || m->perms[3] == 'p' ? KVME_TYPE_SWAP : KVME_TYPE_NONE;
    if (m->perms[3] == 'p' || strncmp(m->path, "/dev/zero", 9) == 0)
      k->kve_obj = m->perms[3] == 'p' ? pf_shim_mix((uint64_t)getpid() ^ pf_shim_mix(m->lo))
                                      : pf_shim_mix(pf_shim_mix(m->dev) ^ m->ino);
  }
  memcpy(k->kve_path, m->path, n + 1);
  k->kve_structsize = (int)((offsetof(struct kinfo_vmentry, kve_path) + n + 1 + 7) & ~(size_t)7);
}

struct pf_shim_fbsd_out {
  char *buf;
  size_t room, len;
  int full;
};

static int
pf_shim_fbsd_put(const struct pf_shim_map *m, void *arg)
{
  struct pf_shim_fbsd_out *o = arg;
  struct kinfo_vmentry k;
  pf_shim_fbsd_record(m, &k);
  if (o->buf) {
    if (o->len + (size_t)k.kve_structsize > o->room) {
      o->full = 1;
      return 1;
    }
    memcpy(o->buf + o->len, &k, (size_t)k.kve_structsize);
  }
  o->len += (size_t)k.kve_structsize;
  return 0;
}

int
sysctl(const int *name, unsigned int namelen, void *oldp, size_t *oldlenp, const void *newp,
       size_t newlen)
{
  struct pf_shim_fbsd_out o;
  AO_fetch_and_add1(&pf_shim_fbsd_counts[PF_SHIM_FBSD_VMMAP]);
  if (namelen != 4 || name[0] != CTL_KERN || name[1] != KERN_PROC || name[2] != KERN_PROC_VMMAP
      || !oldlenp)
    return pf_shim_fbsd_fail(ENOENT);        /* not modelled */
  if (newp || newlen)
    return pf_shim_fbsd_fail(EPERM);         /* a read-only node */
  if (name[3] != (int)getpid())
    return pf_shim_fbsd_fail(ESRCH);         /* the caller's map only */
  o.buf = oldp;
  o.room = oldp ? *oldlenp : 0;
  o.len = 0;
  o.full = 0;
  if (pf_shim_maps(pf_shim_fbsd_put, &o) < 0)
    return pf_shim_fbsd_fail(EIO);
  *oldlenp = o.len;
  return o.full ? pf_shim_fbsd_fail(ENOMEM) : 0;
}

/* UMTX_OP_SHM: exactly one of the four flags (umtx_shm: EINVAL else); the
 * registry page of the word's (object, byte offset) as a file in /dev/shm. */
static int
pf_shim_fbsd_umtx_shm(unsigned long flags, void *addr)
{
  struct pf_shim_map m;
  uint64_t a = (uint64_t)(uintptr_t)addr;
  char name[160];
  int fd, n = !!(flags & UMTX_SHM_CREAT) + !!(flags & UMTX_SHM_LOOKUP) + !!(flags & UMTX_SHM_DESTROY)
              + !!(flags & UMTX_SHM_ALIVE);
  AO_fetch_and_add1(&pf_shim_fbsd_counts[PF_SHIM_FBSD_UMTX_SHM]);
  if (n != 1 || (flags & ~(unsigned long)0xf))
    return pf_shim_fbsd_fail(EINVAL);
  if (pf_shim_maps_at(a, &m) != 1 || m.lo > a)
    return pf_shim_fbsd_fail(EFAULT);
  if (m.perms[3] == 's')
    snprintf(name, sizeof name, "/dev/shm/pfutex-fbsd-umtxshm-u%u-%llx-%llu-%llx", (unsigned)geteuid(),
             (unsigned long long)m.dev, (unsigned long long)m.ino,
             (unsigned long long)(m.off + a - m.lo));
  else
    snprintf(name, sizeof name, "/dev/shm/pfutex-fbsd-umtxshm-u%u-p%d-%llx", (unsigned)geteuid(),
             (int)getpid(), (unsigned long long)a);
  if (flags & UMTX_SHM_DESTROY)
    return unlink(name) == 0 ? 0 : pf_shim_fbsd_fail(ESRCH);
  fd = open(name, O_RDWR | O_CLOEXEC | ((flags & UMTX_SHM_CREAT) ? O_CREAT : 0), 0600);
  if (fd < 0)
    return pf_shim_fbsd_fail(errno == ENOENT ? ESRCH : errno);
  if (flags & UMTX_SHM_ALIVE) {
    close(fd);
    return 0;
  }
  if (ftruncate(fd, sysconf(_SC_PAGESIZE)) != 0) {
    close(fd);
    return pf_shim_fbsd_fail(ENOMEM);
  }
  return fd;
}

int
_umtx_op(void *obj, int op, unsigned long val, void *uaddr, void *uaddr2)
{
  switch (op) {
  case UMTX_OP_SHM:
    return pf_shim_fbsd_umtx_shm(val, uaddr);
  case UMTX_OP_WAIT_UINT:
    return pf_shim_fbsd_wait(obj, val, uaddr, uaddr2, 0);
  case UMTX_OP_WAIT_UINT_PRIVATE:
    return pf_shim_fbsd_wait(obj, val, uaddr, uaddr2, 1);
  case UMTX_OP_WAKE:
    return pf_shim_fbsd_wake(obj, val, 0);
  case UMTX_OP_WAKE_PRIVATE:
    return pf_shim_fbsd_wake(obj, val, 1);
  default:
    return pf_shim_fbsd_fail(EINVAL);   /* not modelled (FreeBSD: EINVAL when invalid) */
  }
}

/* ---- The shim port's object_id: Linux's, or FreeBSD's (shim.h) ---------- */

static volatile AO_t pf_shim_fbsd_identity = (AO_t)-1;   /* -1: not read yet */

void
pf_shim_freebsd_set_identity(int on)
{
  AO_store(&pf_shim_fbsd_identity, (AO_t)(on != 0));
}

int
pf_shim_freebsd_object_id(const void *p, struct pf_os_objid *id)
{
  return pf_shim_identity_on(&pf_shim_fbsd_identity, "PF_SHIM_FREEBSD_IDENTITY")
             ? pf_freebsd_shim_object_id(p, id)
             : pf_os_object_id(p, id);
}
