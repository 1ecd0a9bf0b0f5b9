/* park.c - the emulation's Windows park port (backend emu:win32).
 *
 * Private parks (the process's own table): WaitOnAddress on the node's park
 * word, "sleep while the word is 0"; unpark stores 1 (release) and calls
 * WakeByAddressSingle on the word.  Windows 8 and later; -lsynchronization.
 * WaitOnAddress only ever keys an address within one process, so:
 *
 * Region parks (a region's slot, unparked by any process): one named
 * semaphore per waiting thread record, "Local\pfutex-<pid>-<n>", created
 * by the record's first prepare (count 0, maximum a large number) and kept
 * for the life of the record.  prepare writes the waiter's pid and n into
 * the slot's struct pf_park (id, num: fixed-width, in shared memory).  The
 * unparker stores the token (word = 1, release), then builds the name from
 * id and num - never trusting them further: id must be a positive pid, num
 * in [1, INT32_MAX], and a name that names no semaphore (the waiter died,
 * the slot was scribbled on) is simply nothing to wake - opens it
 * (OpenSemaphore, SEMAPHORE_MODIFY_STATE), releases one count, and closes
 * it.  A wrong but existing name is another waiter's semaphore: a spurious
 * wakeup, which every parker absorbs by re-checking its word.  The waiter
 * waits on its semaphore with WaitForSingleObject and re-checks the word
 * after every return.  A count left over from a token the waiter saw in the
 * word without waiting (or a region's recovery unparking twice) is a
 * spurious wakeup of a later park, never a lost one; a region park drains
 * them before its first look at the word.
 *
 * Quirks normalised here for the engine's contract (src/port.h):
 *  - WaitOnAddress returns TRUE on a wake, on a value mismatch, and
 *    spuriously: the word is re-checked after every return, 0 only with
 *    the token.
 *  - Timeouts are relative milliseconds (DWORD; INFINITE = 0xffffffff): the
 *    remaining time is recomputed from the deadline's own clock
 *    (CLOCK_MONOTONIC or CLOCK_REALTIME, pf_deadline_left) on every loop,
 *    rounded up to a whole millisecond (never early), capped below
 *    INFINITE; a timeout (FALSE + ERROR_TIMEOUT, or WAIT_TIMEOUT) is
 *    believed only once the deadline has passed on that clock.
 *  - EINTR: Windows has no signal that interrupts a thread (the C runtime
 *    runs SIGINT/SIGBREAK handlers on a thread of their own; see
 *    ports/win32/posix.h), so a park never returns -EINTR and untimed parks
 *    can sleep INFINITE: nothing could need the engine's restart decision.
 *    Cancellation: deferred cancellation acts at cancellation points, and
 *    a park is none; winpthreads' asynchronous cancellation redirects the
 *    thread's context, which takes effect only when a thread asleep in the
 *    OS returns to user mode, so it never ends a parked thread (the tests
 *    that need that skip on Windows).
 *
 * PF_PORT_WRONG (testing only): believes the OS's timeouts - the remaining
 * time is truncated to whole milliseconds and a timeout return (FALSE +
 * ERROR_TIMEOUT, WAIT_TIMEOUT) is taken as the deadline having passed,
 * without asking its clock: waits then end up to a millisecond early (and
 * more where the OS's timer is coarse).  (Parking a region's slot on
 * WaitOnAddress, the other plausible mistake, is masked by the engine's
 * one-second region slices, wait.c (R): lost cross-process wakes only come
 * late.)
 */
#include "port.h"

#include <stdio.h>
#include <windows.h>

static const unsigned int pf_w32_gen = 1;
static volatile AO_t pf_w32_sem_next;          /* n of the next semaphore made here */

#define PF_W32_SEM_MAX 0x7fffffffL

static void
pf_w32_sem_name(char *buf, size_t n, uint32_t pid, uint32_t num)
{
  snprintf(buf, n, "Local\\pfutex-%lu-%lu", (unsigned long)pid, (unsigned long)num);
}

static int
pf_w32_init(void)
{
  return 0;
}

static int
pf_w32_setup(struct pf_parker *p)
{
  char name[64];
  HANDLE h;
  AO_t n = AO_fetch_and_add1_full(&pf_w32_sem_next) + 1;
  if (n > (AO_t)INT32_MAX)
    return -ENOMEM;
  pf_w32_sem_name(name, sizeof name, (uint32_t)GetCurrentProcessId(), (uint32_t)n);
  h = CreateSemaphoreA(NULL, 0, PF_W32_SEM_MAX, name);
  if (!h)
    return -ENOMEM;
  p->sem = h;
  p->id = (int)GetCurrentProcessId();
  p->num = (int)n;
  p->gen = pf_w32_gen;
  return 0;
}

static int
pf_w32_prepare(struct pf_parker *p, struct pf_park *k)
{
  int ret;
  if (PF_UNLIKELY(p->gen != pf_w32_gen) && (ret = pf_w32_setup(p)) < 0)
    return ret;
  k->id = p->id;
  k->num = p->num;
  AO_int_store(&k->word, 0);
  return 0;
}

/* Milliseconds to sleep for dl (INFINITE for none), or -ETIMEDOUT. */
static int
pf_w32_ms(const struct pf_deadline *dl, DWORD *ms)
{
  struct timespec left;
  uint64_t m;
  int ret;
  if (!dl) {
    *ms = INFINITE;
    return 0;
  }
  if ((ret = pf_deadline_left(dl, &left)) < 0)
    return ret;
#ifdef PF_PORT_WRONG
  m = (uint64_t)left.tv_sec * 1000u + (uint64_t)left.tv_nsec / 1000000u;
#else
  m = (uint64_t)left.tv_sec * 1000u + ((uint64_t)left.tv_nsec + 999999u) / 1000000u;
#endif
  *ms = m >= (uint64_t)INFINITE - 1 ? INFINITE - 1 : (DWORD)m;
  return 0;
}

/* For the tests (tests/tap/pft.c: "is that thread asleep?", which Linux
 * answers from /proc): is thread tid asleep on one of the engine's
 * parkers (each says which thread sleeps on it, else 0)?  Two stores per
 * OS sleep. */
static int
pf_w32_sleeps_on(const struct pf_parker *p, void *arg)
{
  return AO_int_load(&p->sleeper) == *(const unsigned long *)arg;
}

int pf_win32_thread_parked(unsigned long tid);
int
pf_win32_thread_parked(unsigned long tid)
{
  return pf_parker_any(pf_w32_sleeps_on, &tid);
}

static int
pf_w32_park(struct pf_parker *p, struct pf_park *k, int shared, const struct pf_deadline *dl)
{
  volatile uint32_t *word = &k->word;
  /* Counts left from earlier tokens that were taken from the word without
   * waiting: drop them before the word is first checked (a count released
   * after this check is this park's token, or a spurious wakeup).  Only
   * region parks pay for it. */
  if (shared)
    while (WaitForSingleObject((HANDLE)p->sem, 0) == WAIT_OBJECT_0)
      ;
  for (;;) {
    DWORD ms;
    int timedout;
    if (AO_int_load_acquire(&k->word))
      return 0;
    if (pf_w32_ms(dl, &ms) < 0)
      return -ETIMEDOUT;
    AO_int_store(&p->sleeper, (unsigned int)GetCurrentThreadId());
    if (shared) {
      timedout = WaitForSingleObject((HANDLE)p->sem, ms) == WAIT_TIMEOUT;
    } else {
      uint32_t zero = 0;
      timedout = !WaitOnAddress(word, &zero, sizeof zero, ms) && GetLastError() == ERROR_TIMEOUT;
    }
    AO_int_store(&p->sleeper, 0);
#ifdef PF_PORT_WRONG
    if (timedout && !AO_int_load_acquire(&k->word))
      return -ETIMEDOUT;
#endif
    (void)timedout;
    /* Whatever it returned (a wake, a mismatch, spuriously, a timeout):
     * the word and the deadline decide. */
  }
}

static void
pf_w32_unpark(struct pf_park *k, int shared)
{
  if (shared) {
    /* k is untrusted shared memory: read the name's numbers before the
     * token is given (giving it is the last access to *k). */
    int32_t pid = k->id, num = k->num;
    char name[64];
    HANDLE h;
    AO_int_store_release(&k->word, 1);
    if (pid <= 0 || num <= 0)
      return;
    pf_w32_sem_name(name, sizeof name, (uint32_t)pid, (uint32_t)num);
    if ((h = OpenSemaphoreA(SEMAPHORE_MODIFY_STATE, FALSE, name)) != NULL) {
      (void)ReleaseSemaphore(h, 1, NULL);
      CloseHandle(h);
    }
  } else {
    void *word = &k->word;
    AO_int_store_release(&k->word, 1);
    /* Only hashes the address: a stale one wakes nobody or spuriously. */
    WakeByAddressSingle(word);
  }
}

static void
pf_w32_collect(struct pf_parker *p, struct pf_park *k, int shared)
{
  pf_park_word_collect(pf_w32_park, p, k, shared);
}

const struct pf_port pf_port_win32 = {
  .name = "win32",
  .gen = &pf_w32_gen,
  .init = pf_w32_init,
  .prepare = pf_w32_prepare,
  .park = pf_w32_park,
  .unpark = pf_w32_unpark,
  .collect = pf_w32_collect,
};
