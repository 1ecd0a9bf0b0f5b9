/* schedpt.h - scheduling points (configure --enable-sched-points; testing
 * only).  Included by pf.h right after <atomic_ops.h>, only under
 * PF_SCHED_POINTS: without it the engine compiles exactly as it was.
 *
 * Every shared-memory access the engine makes through libatomic_ops becomes
 * a scheduling point: each primitive it uses is kept under another name
 * (pf_sched_ao_*, a static inline whose body was expanded before the
 * redefinition, so it is the library's own, macro or function) and its
 * name is redefined to call pf_sched_point(__FILE__, __LINE__) first.  So
 * are the crash points (emu.h, PF_CRASH) and the spins of a lock waiter
 * (table.c, pf_cpu_relax: PF_SCHED_SPIN, a waiter that yields to the
 * holder).  Plain accesses under a bucket lock are no points: the lock's
 * own accesses are.
 *
 * The points call the hooks of a controlled scheduler (tests/sched/), which
 * lets one thread run at a time and decides at each point who runs next.
 * Threads the scheduler does not control (and every thread while no hooks
 * are installed) pass the points at once.  The test-only park port
 * emu:sched (src/schedpt.c) parks through the same hooks: its park tells the
 * scheduler the thread is blocked until its token word is 1, or, for a
 * timed park, until the scheduler chooses to fire the timeout (virtual
 * time: the deadline's value is never looked at). */
#ifndef PF_SCHEDPT_H
#define PF_SCHEDPT_H

#ifndef PF_SCHED_POINTS
# error "src/schedpt.h is for --enable-sched-points builds only (pf.h includes it)"
#endif

struct pf_sched_hooks {
  /* A scheduling point of the calling thread, before an access to addr
   * (NULL: a fence or a label): the scheduler may run others (or raise a
   * signal in this thread) before it returns. */
  void (*point)(const char *file, int line, const volatile void *addr);
  /* A lock waiter's spin: the caller cannot go on until the word it last
   * read (the lock) changes, so the scheduler runs another. */
  void (*spin)(const char *file, int line);
  /* Block until *word != 0 (0), until the scheduler fires the timeout of
   * a timed park (-ETIMEDOUT), or after a signal handler ran (-EINTR).
   * timed: 0 none; 1 a deadline; 2 a region's slice (wait.c (R)) or its
   * bounded collect, which the scheduler fires only once the waiter was
   * counted (its node is no longer QUEUED).  Returns -ENOSYS for a thread
   * the scheduler does not control. */
  int (*park)(const volatile unsigned int *word, int timed);
  /* The clocks of a controlled thread (pf_clock_now): virtual time, so the
   * slices and the lock lease of regions (wait.c (R), src/region/lock.c) never
   * depend on how fast the machine ran the schedule.  -ENOSYS: the real
   * clock. */
  int (*now)(int clock, struct timespec *ts);
};
/* Installed by the harness before its threads run; NULL: no scheduler. */
extern const struct pf_sched_hooks *volatile pf_sched_hooks;

void pf_sched_point(const char *file, int line, const volatile void *addr);
void pf_sched_spin(const char *file, int line);
/* Set by wait.c around a region's park that is only a slice (R). */
extern __thread int pf_sched_slice;
#define PF_SCHED_SLICE(v) (pf_sched_slice = (v))
/* Set by wait.c around a park that is a poll's slice (src/pi.c: a PI
 * locker asks between slices whether the lock's owner lives): a slice
 * too, for the scheduler (it fires once the waiter is no longer queued),
 * so an untimed lock is not timed out into an endless poll. */
extern __thread int pf_sched_poll;
#define PF_SCHED_POLL(v) (pf_sched_poll = (v))
#define PF_SCHED_POLLING() pf_sched_poll
/* Set by waitv.c around a slice of a futex_waitv with shared tables'
 * words (src/waitv.c): what the slice's end looks at besides its own
 * parker, so the scheduler may fire the slice once one of them would end
 * the wait: state words of slots (in shared memory, the same address in
 * every process of a region), each ready when it is not QUEUED (a further
 * table's parker, rung) or when it is WAKING (a member, counted) or MOVED
 * (a member whose requeuer died before it rang the parker). */
#define PF_SCHED_ALT_MAX 8
struct pf_sched_alt {
  int n;
  const volatile unsigned int *state[PF_SCHED_ALT_MAX];
  int waking[PF_SCHED_ALT_MAX];          /* 0: ready when not QUEUED; 1: when WAKING or MOVED */
};
extern __thread struct pf_sched_alt pf_sched_alt;

extern const struct pf_backend pf_backend_emu_sched;

#define PF_SCHED_SPIN() pf_sched_spin(__FILE__, __LINE__)
#define PF_SCHED_POINT() pf_sched_point(__FILE__, __LINE__, NULL)

/* ---- The primitives the engine uses (grep AO_ src/ ports/), redefined ---- */
#define PF_SCHED_WRAP(a, expr) (pf_sched_point(__FILE__, __LINE__, (a)), (expr))

static inline unsigned int
pf_sched_ao_int_load(const volatile unsigned int *a)
{
  return AO_int_load(a);
}
static inline unsigned int
pf_sched_ao_int_load_acquire(const volatile unsigned int *a)
{
  return AO_int_load_acquire(a);
}
static inline void
pf_sched_ao_int_store(volatile unsigned int *a, unsigned int v)
{
  AO_int_store(a, v);
}
static inline void
pf_sched_ao_int_store_release(volatile unsigned int *a, unsigned int v)
{
  AO_int_store_release(a, v);
}
static inline int
pf_sched_ao_int_compare_and_swap_full(volatile unsigned int *a, unsigned int o, unsigned int n)
{
  return AO_int_compare_and_swap_full(a, o, n);
}
static inline unsigned int
pf_sched_ao_int_fetch_and_add_full(volatile unsigned int *a, unsigned int v)
{
  return AO_int_fetch_and_add_full(a, v);
}
static inline void
pf_sched_ao_nop_full(void)
{
  AO_nop_full();
}
static inline AO_t
pf_sched_ao_load(const volatile AO_t *a)
{
  return AO_load(a);
}
static inline AO_t
pf_sched_ao_load_acquire(const volatile AO_t *a)
{
  return AO_load_acquire(a);
}
static inline void
pf_sched_ao_store(volatile AO_t *a, AO_t v)
{
  AO_store(a, v);
}
static inline void
pf_sched_ao_store_release(volatile AO_t *a, AO_t v)
{
  AO_store_release(a, v);
}
static inline int
pf_sched_ao_compare_and_swap_acquire(volatile AO_t *a, AO_t o, AO_t n)
{
  return AO_compare_and_swap_acquire(a, o, n);
}
static inline AO_t
pf_sched_ao_fetch_and_add1_full(volatile AO_t *a)
{
  return AO_fetch_and_add1_full(a);
}
static inline AO_t
pf_sched_ao_fetch_and_sub1_full(volatile AO_t *a)
{
  return AO_fetch_and_sub1_full(a);
}

#undef AO_int_load
#undef AO_int_load_acquire
#undef AO_int_store
#undef AO_int_store_release
#undef AO_int_compare_and_swap_full
#undef AO_int_fetch_and_add_full
#undef AO_nop_full
#undef AO_load
#undef AO_load_acquire
#undef AO_store
#undef AO_store_release
#undef AO_compare_and_swap_acquire
#undef AO_fetch_and_add1_full
#undef AO_fetch_and_sub1_full
#define AO_int_load(a) PF_SCHED_WRAP((const volatile void *)(a), pf_sched_ao_int_load(a))
#define AO_int_load_acquire(a) PF_SCHED_WRAP((const volatile void *)(a), pf_sched_ao_int_load_acquire(a))
#define AO_int_store(a, v) PF_SCHED_WRAP((const volatile void *)(a), pf_sched_ao_int_store((a), (v)))
#define AO_int_store_release(a, v) PF_SCHED_WRAP((const volatile void *)(a), pf_sched_ao_int_store_release((a), (v)))
#define AO_int_compare_and_swap_full(a, o, n) PF_SCHED_WRAP((const volatile void *)(a), pf_sched_ao_int_compare_and_swap_full((a), (o), (n)))
#define AO_int_fetch_and_add_full(a, v) PF_SCHED_WRAP((const volatile void *)(a), pf_sched_ao_int_fetch_and_add_full((a), (v)))
#define AO_nop_full() PF_SCHED_WRAP(NULL, pf_sched_ao_nop_full())
#define AO_load(a) PF_SCHED_WRAP((const volatile void *)(a), pf_sched_ao_load(a))
#define AO_load_acquire(a) PF_SCHED_WRAP((const volatile void *)(a), pf_sched_ao_load_acquire(a))
#define AO_store(a, v) PF_SCHED_WRAP((const volatile void *)(a), pf_sched_ao_store((a), (v)))
#define AO_store_release(a, v) PF_SCHED_WRAP((const volatile void *)(a), pf_sched_ao_store_release((a), (v)))
#define AO_compare_and_swap_acquire(a, o, n) PF_SCHED_WRAP((const volatile void *)(a), pf_sched_ao_compare_and_swap_acquire((a), (o), (n)))
#define AO_fetch_and_add1_full(a) PF_SCHED_WRAP((const volatile void *)(a), pf_sched_ao_fetch_and_add1_full(a))
#define AO_fetch_and_sub1_full(a) PF_SCHED_WRAP((const volatile void *)(a), pf_sched_ao_fetch_and_sub1_full(a))

#endif
