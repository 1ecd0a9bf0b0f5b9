/* region_genwrap.c - a process entry's generation wraps (issue 18).
 *
 * A lock id keeps 16 bits of its entry's generation, so after 65,536
 * owners of one entry an old owner's id is the new owner's again.  The new
 * owner must first clear what the earlier owners of the entry left
 * (src/region/slot.c, pf_att_sweep_entry): else a slot a dead waiter left queued
 * passes for the new owner's live waiter, and a wake is spent on it.
 *
 * White-box: X (a fork child) waits on a region word and is killed; its
 * slot stays queued with id (entry e, generation 1).  The test then sets
 * entry e's generation to 0xffff (as if 65,534 more owners had come and
 * gone) and forks Y, which claims entry e: its generation wraps to 1, so
 * Y's lock id is X's.  A live waiter Z is queued behind X's slot.
 * wake(1) must wake Z, as the kernel wakes the one live waiter. */
#include "config.h"
#include <pfutex.h>

#include <limits.h>
#include "region_util.h"
#include "basic.h"

#if !defined(PF_HAVE_EMU) || defined(_WIN32)
int
main(void)
{
  skip_all("no emulated backend built, or no fork (Windows)");
}
#else
#include "region/internal.h"

struct shared {
  uint32_t word;
  volatile int z_started, z_done, z_ret, x_started, y_ready, y_go;
  volatile uint32_t y_id, x_id;
};

int
main(void)
{
  pfutex_region_attr_t at;
  pfutex_region_t *r;
  struct shared *s;
  const char *be;
  char name[64];
  pid_t x, y, z;
  uint32_t e;
  int st, ret;
  long long t0;

  pft_watchdog(60);
  be = pfutex_backend();
  if (!be || strncmp(be, "emu:", 4) != 0)
    skip_all("backend %s: the kernel keys region words itself (no process table in use)",
             be ? be : "none");
  plan(5);
  ru_name(name, sizeof name, "genwrap");
  memset(&at, 0, sizeof at);
  at.slots = 8;
  at.buckets = 1;
  at.procs = 4;
  if (!(r = pfutex_region_open_attr(name, 4096, O_RDWR | O_CREAT | O_EXCL, 0600, &at)))
    sysbail("pfutex_region_open_attr");
  s = pfutex_region_addr(r);

  /* X: waits, is killed while queued */
  if ((x = fork()) == 0) {
    s->x_id = r->att->me;
    s->x_started = 1;
    pfutex_wait(&s->word, 0, PFUTEX_BITSET_MATCH_ANY, 0, NULL, PFUTEX_CLOCK_MONOTONIC);
    _exit(1);
  }
  if (ru_wait_asleep(x, x, &s->x_started, NULL) != 0)
    bail("X never slept");
  /* Z: a live waiter queued behind X's slot */
  if ((z = fork()) == 0) {
    s->z_started = 1;
    ret = pfutex_wait(&s->word, 0, PFUTEX_BITSET_MATCH_ANY, 0, NULL, PFUTEX_CLOCK_MONOTONIC);
    s->z_ret = ret;
    s->z_done = 1;
    _exit(0);
  }
  if (ru_wait_asleep(z, z, &s->z_started, &s->z_done) != 0)
    bail("Z never slept");
  kill(x, SIGKILL);
  waitpid(x, &st, 0);
  e = (s->x_id & 0xffffu) - 1;
  is_int(1, (int)(s->x_id >> 16), "X held entry %u with generation 1", e);

  /* 65,534 owners later: the next claim of entry e wraps to generation 1 */
  AO_int_store(&r->att->procs[e].gen, 0xffffu);
  if ((y = fork()) == 0) {
    s->y_id = r->att->me;
    s->y_ready = 1;
    while (!s->y_go)
      usleep(1000);
    _exit(0);
  }
  while (!s->y_ready)
    usleep(1000);
  ok(s->y_id == s->x_id, "Y claimed entry %u, and its lock id is X's (0x%08x, 0x%08x)", e,
     (unsigned int)s->y_id, (unsigned int)s->x_id);

  t0 = pft_now_ns();
  ret = pfutex_wake(&s->word, PFUTEX_BITSET_MATCH_ANY, 1, 0);
  is_int(1, ret, "wake(1) counts one waiter");
  while (!s->z_done && pft_now_ns() - t0 < 500000000LL)
    usleep(1000);
  ok(s->z_done && s->z_ret == 0, "... and it is Z, the live one, at once (%s after %.3f s)",
     s->z_done ? "returned" : "still waiting", (double)(pft_now_ns() - t0) / 1e9);
  s->y_go = 1;
  pfutex_wake(&s->word, PFUTEX_BITSET_MATCH_ANY, INT_MAX, 0);
  waitpid(y, &st, 0);
  waitpid(z, &st, 0);
  {
    struct pf_region_stats rs;
    const char *why;
    ret = pf_region_check(r, &rs, &why);
    ok(ret == 0 && rs.slots_dead == 0 && rs.queued == 0,
       "the region is consistent, no dead slot left, nothing queued (%d %s; dead %u, queued %u)", ret,
       why, rs.slots_dead, rs.queued);
  }
  pfutex_region_close(r);
  pfutex_region_unlink(name);
  return 0;
}
#endif
