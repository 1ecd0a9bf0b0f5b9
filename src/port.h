/* port.h - what a park port sees of the engine (ports/<os>/park.c,
 * src/park_word.c, src/schedpt.c): the contract a port implements, and the
 * few services of the engine a port may use.  A port knows nothing of
 * futex semantics, queues, threads' records or regions (src/emu.h, which
 * includes this header, is the engine's own). */
#ifndef PF_PORT_H
#define PF_PORT_H

#include "pf.h"

#include <signal.h>

struct pf_os_objid;          /* src/os.h */

/* ---- The park port: the only thing an OS supplies ---------------------- */
/* A port parks and unparks exactly one waiter; it knows nothing of futex
 * semantics.  A parker has two halves: `struct pf_park` lives in the queued
 * node (for a process-shared futex: in the region's slot, in shared
 * memory), and holds what an unparker needs, in fixed-width fields;
 * `struct pf_parker` lives in the waiting thread's record and holds the
 * port's process-local state.  `shared`: the node is in a region, so the
 * unparker may be another process (the OS sleep must then be one that
 * another process can end: a shared futex, a SysV semaphore).
 * Contract:
 *   prepare(p, k) before the node is queued, with signals blocked: arm the
 *                pair for one park/unpark, setting up the port's resources
 *                for p the first time (0, or -ENOMEM when exhausted).
 *   park(p, k, sh, dl)  sleep until unparked (0: the token is consumed),
 *                until the absolute deadline dl passes (-ETIMEDOUT; NULL:
 *                none), or a signal handler ran (-EINTR).  A port never
 *                restarts its sleep after a handler: the engine decides,
 *                re-checking the futex word as Linux's restart does
 *                (wait.c (F)).  It may return -EINTR spuriously; never 0
 *                without a token.  Not a cancellation point (futex(2) is
 *                not one), but interruptible by asynchronous cancellation.
 *   unpark(k, sh) give the token; called at most once per prepare (twice
 *                only by a region's recovery, which the port tolerates: a
 *                surplus token is a spurious wakeup the engine absorbs).
 *                It reads k before it gives the token: giving the token is
 *                the port's last access to *k.  k is untrusted when shared.
 *   collect(p, k, sh) the token is given or on its way: make sure it is
 *                taken, even if a park already took it and was then cut
 *                short (an asynchronous cancellation or a siglongjmp can
 *                strike right after the OS handed the token over, before
 *                the park could record it).  Returns once the token is
 *                consumed; for a region's node (sh), also after one slice
 *                of a second without it (wait.c (R): its unparker died, or
 *                a corrupt slot sent it elsewhere). */
struct pf_park {                 /* fixed layout: part of a node (region ABI) */
  uint32_t word;                 /* 0 armed, 1 token given (futex port: the futex
                                    word; sysv: release/acquire around the semaphore) */
  int32_t id;                    /* sysv: semaphore set id */
  int32_t num;                   /* sysv: semaphore number in the set */
};

struct pf_parker {               /* process-local */
  int id, num;                   /* sysv: this thread's semaphore */
  unsigned int gen;              /* sysv: the port generation it was set up in (0: never) */
  int cnt, cnt_next;             /* sysv: its consumption counter before and after
                                    the pending park (see ports/sysv/park.c) */
  int cnt_armed;                 /* sysv: the counter when this wait was armed */
#ifdef _WIN32
  void *sem;                     /* win32: this record's named semaphore (HANDLE) */
  unsigned int sleeper;          /* win32: the thread asleep on it in the OS, else 0
                                    (for the tests: ports/win32/park.c) */
#endif
  AO_t parked;                   /* the pthread_self() of the thread in the port's
                                    park on it, else 0 (src/wait.c pf_port_park; for
                                    the tests: pf_thread_parked; not on Windows,
                                    whose tests read `sleeper`) */
};

struct pf_port {
  const char *name;      /* "futex", "sysv": the backend is "emu:" name */
  /* The port's generation: a parker whose gen differs needs set-up, which
   * prepare may do under a lock (the engine then calls it with signals
   * blocked); otherwise prepare only arms the parker, lock-free. */
  const unsigned int *gen;
  int (*init)(void);     /* once per process; 0 or -errno */
  int (*prepare)(struct pf_parker *p, struct pf_park *k);
  int (*park)(struct pf_parker *p, struct pf_park *k, int shared, const struct pf_deadline *dl);
  void (*unpark)(struct pf_park *k, int shared);
  void (*collect)(struct pf_parker *p, struct pf_park *k, int shared);
  /* Optional: the OS's identity of the shared mapping holding p, as
   * src/os.h's pf_os_object_id answers it (1, 0, PF_OBJID_NONE, -EFAULT,
   * -ENOSYS); NULL: the host's pf_os_object_id.  A port whose OS names
   * the objects itself supplies it (ports/darwin/objid.c: mach_vm_region
   * and mach_vm_page_info), so that its shim build runs the same code. */
  int (*object_id)(const void *p, struct pf_os_objid *id);
  /* Optional: the OS's own futex, for the words object_id answers
   * PF_OBJID_KERNEL (shared memory the OS names no object for, but keys
   * itself: NetBSD's __futex, OpenBSD's futex(2)).  Every shared op on
   * such a word goes to it whole, checked by the front end as for the
   * engine: op PF_OSF_WAIT (r->val, r->mask, r->dl: 0 or -errno),
   * PF_OSF_WAKE (r->nr, r->mask: the count), PF_OSF_REQUEUE (r->nr,
   * r->nr2, r->uaddr2, PF_F_CMP with r->val: woken + moved), PF_OSF_WAKE_OP
   * (r->nr, r->nr2, r->uaddr2, r->wakeop: the count); -ENOSYS for what the
   * OS's call cannot do as Linux does.  futex_waitv and the PI ops answer
   * ENOSYS on such words; a two-word op with one such word, EINVAL. */
  long (*os_futex)(int op, const struct pf_req *r);
};
enum { PF_OSF_WAIT = 1, PF_OSF_WAKE, PF_OSF_REQUEUE, PF_OSF_WAKE_OP };

extern const struct pf_port pf_port_futex;
extern const struct pf_port pf_port_sysv;
/* The other OSes' ports (ports/<os>/park.c), and the same sources built
 * against tests/shims/<os>/ (a model of the OS call on Linux; configure
 * --enable-test-shims) as pf_port_<os>_shim, named "<os>-shim". */
extern const struct pf_port pf_port_freebsd;
extern const struct pf_port pf_port_dragonfly;
extern const struct pf_port pf_port_openbsd;
extern const struct pf_port pf_port_netbsd;
extern const struct pf_port pf_port_darwin;
extern const struct pf_port pf_port_win32;
extern const struct pf_port pf_port_freebsd_shim;
extern const struct pf_port pf_port_dragonfly_shim;
extern const struct pf_port pf_port_openbsd_shim;
extern const struct pf_port pf_port_netbsd_shim;
extern const struct pf_port pf_port_darwin_shim;
extern const struct pf_port pf_port_sched;       /* --enable-sched-points: src/schedpt.c */
extern const struct pf_port *pf_emu_port;   /* the active port, set once at init */

/* The ports whose park word is their token (src/park_word.c): no set-up
 * (gen pf_park_word_gen), prepare arms the word, collect parks until the
 * word says the token came (a region's: one slice of a second at most). */
extern const unsigned int pf_park_word_gen;
int pf_park_word_init(void);
int pf_park_word_prepare(struct pf_parker *p, struct pf_park *k);
void pf_park_word_collect(int (*park)(struct pf_parker *, struct pf_park *, int, const struct pf_deadline *),
                          struct pf_parker *p, struct pf_park *k, int shared);

/* ---- The engine's services to ports ------------------------------------- */
/* Spinlocks that yield the CPU when the holder seems preempted (src/table.c),
 * for the ports' and the engine's pools: taken only inside a critical
 * section (signals blocked), so a handler never meets one held. */
void pf_spin_lock(AO_t *l);
void pf_spin_unlock(AO_t *l);

/* Cancellation (src/thread.c). */
struct pf_cancel {
  int state, type;
};
/* Cancellation off, and back as it was: if it was enabled and asynchronous
 * and a cancellation came meanwhile, it acts in pf_cancel_restore, through
 * pthread_testcancel (glibc 2.36 acts inside pthread_setcancelstate too,
 * but then pthread_join reports NULL instead of PTHREAD_CANCELED). */
void pf_cancel_off(struct pf_cancel *c);
void pf_cancel_restore(const struct pf_cancel *c);

/* Every signal but the synchronous faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGTRAP, SIGSYS): a fault raised while they are blocked kills the process
 * instead of reaching its handler, and a fault's handler runs on the
 * faulting thread, never on one asleep.  Set by pf_thread_init. */
extern sigset_t pf_sig_nonfault;

/* Could any handler have run?  0 when no unblocked signal has one: an EINTR
 * then came from a stop (SIGSTOP/SIGCONT, ptrace), after which Linux
 * resumes even a timed futex wait. */
int pf_sig_handler_possible(void);

/* Is pred(p, arg) true of any parker of the engine's thread records
 * (src/thread.c)?  For a port's test hooks (ports/win32/park.c: is a
 * thread asleep in a park?), never on a wait or wake path. */
int pf_parker_any(int (*pred)(const struct pf_parker *p, void *arg), void *arg);

/* Is the thread whose pthread_self() is thr in a port's park right now
 * (src/wait.c pf_port_park: queued, or its wait just ended)?  For the
 * tests (tests/tap/pft.c pft_waiter_start: a thread that only looks
 * asleep to the OS may be asleep elsewhere, before its node is queued).
 * After a siglongjmp out of a park the answer stays yes until the
 * thread's next wait or wake abandons that wait (src/thread.c). */
int pf_thread_parked(uintptr_t thr);

#endif
