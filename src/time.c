/* time.c - timespec checks, deadlines and clocks: every timeout in pfutex is
 * an absolute deadline on a named clock, validated here once. */
#include "os.h"

#define PF_NSEC 1000000000L

/* Linux's timespec64_valid: tv_sec >= 0 and 0 <= tv_nsec < 1e9. */
int
pf_timespec_valid(const struct timespec *ts)
{
  return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < PF_NSEC;
}

int
pf_clock_now(int clock, struct timespec *now)
{
  clockid_t id = clock == PFUTEX_CLOCK_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC;
#ifdef PF_SCHED_POINTS
  const struct pf_sched_hooks *h = pf_sched_hooks;
  if (h && h->now && h->now(clock, now) == 0)
    return 0;                   /* src/schedpt.h: virtual time */
#endif
  if (clock_gettime(id, now) != 0)
    return -errno;
  return 0;
}

static void
pf_timespec_add(struct timespec *r, const struct timespec *a, const struct timespec *b)
{
  /* Saturate like the kernel's ktime_add_safe instead of overflowing. */
  const time_t tmax = (time_t)((((uintmax_t)1 << (sizeof(time_t) * 8 - 2)) - 1) * 2 + 1);
  long ns = a->tv_nsec + b->tv_nsec;
  time_t carry = ns >= PF_NSEC;
  if (carry)
    ns -= PF_NSEC;
  if (a->tv_sec > tmax - b->tv_sec - carry) {
    r->tv_sec = tmax;
    r->tv_nsec = PF_NSEC - 1;
    return;
  }
  r->tv_sec = a->tv_sec + b->tv_sec + carry;
  r->tv_nsec = ns;
}

int
pf_deadline_from_rel(struct pf_deadline *dl, const struct timespec *rel)
{
  struct timespec now;
  int err;
  if (!pf_timespec_valid(rel))
    return -EINVAL;
  dl->clock = PFUTEX_CLOCK_MONOTONIC;
  if ((err = pf_clock_now(dl->clock, &now)) < 0)
    return err;
  pf_timespec_add(&dl->abs, &now, rel);
  return 0;
}

int
pf_deadline_from_abs(struct pf_deadline *dl, const struct timespec *abs, int clock)
{
  if (clock != PFUTEX_CLOCK_MONOTONIC && clock != PFUTEX_CLOCK_REALTIME)
    return -EINVAL;
  if (!pf_timespec_valid(abs))
    return -EINVAL;
  dl->clock = clock;
  dl->abs = *abs;
  return 0;
}

int
pf_deadline_left(const struct pf_deadline *dl, struct timespec *left)
{
  struct timespec now;
  int err;
  if ((err = pf_clock_now(dl->clock, &now)) < 0)
    return err;
  if (now.tv_sec > dl->abs.tv_sec
      || (now.tv_sec == dl->abs.tv_sec && now.tv_nsec >= dl->abs.tv_nsec))
    return -ETIMEDOUT;
  left->tv_sec = dl->abs.tv_sec - now.tv_sec;
  left->tv_nsec = dl->abs.tv_nsec - now.tv_nsec;
  if (left->tv_nsec < 0) {
    left->tv_nsec += PF_NSEC;
    left->tv_sec--;
  }
  return 0;
}

int
pf_timespec_copy_in(struct timespec *dst, const struct timespec *user)
{
  return pf_os_copy_in(dst, user, sizeof *dst);
}

int
pf_req_deadline(const struct pf_req *r, struct pf_deadline *dl)
{
  struct timespec ts;
  int ret;

  if (r->uts_kind == PF_TS_NONE || !r->uts)
    return 0;
  /* futex_wait(2): the clock, then the pointer, then the values. */
  if (r->uts_kind == PF_TS_ABS && r->clock != PFUTEX_CLOCK_MONOTONIC
      && r->clock != PFUTEX_CLOCK_REALTIME)
    return -EINVAL;
  if ((ret = pf_timespec_copy_in(&ts, r->uts)) < 0)
    return ret;
  if (r->uts_kind == PF_TS_REL)
    ret = pf_deadline_from_rel(dl, &ts);
  else if (!pf_timespec_valid(&ts))
    ret = -EINVAL;
  else
    ret = pf_deadline_from_abs(dl, &ts, r->clock);
  return ret < 0 ? ret : 1;
}
