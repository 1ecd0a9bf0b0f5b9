/* region_peer: the helper program of tests/region_exec (not a test of its
 * own): an unrelated process that opens a named region by name and waits,
 * wakes, requeues or wake_ops on its words.  Protocol: region_peer.h.  The
 * backend comes from PFUTEX_BACKEND, inherited from the test. */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pfutex/linux.h>
#include "pft.h"
#include "region_util.h"
#include "region_peer.h"

#define NR2(n) ((const struct timespec *)(uintptr_t)(n))

static uint32_t *
word(char *base, const char *k)
{
  return (uint32_t *)(void *)(base + RP_WORD(atoi(k)));
}

int
main(int argc, char **argv)
{
  pfutex_region_t *rg;
  struct rp_slot *s;
  const char *role, *b;
  char *base;
  int slot;
  long r;

  if (argc < 5) {
    fprintf(stderr, "usage: region_peer NAME SLOT ROLE ARGS...\n");
    return 2;
  }
  ru_child_alarm(30);
  slot = atoi(argv[2]);
  role = argv[3];
  if (slot < 0 || slot >= RP_SLOTS)
    return 2;
  if (!(rg = pfutex_region_open(argv[1], 0, O_RDWR, 0))) {
    fprintf(stderr, "region_peer: pfutex_region_open %s: %s\n", argv[1], strerror(errno));
    return 3;
  }
  if (pfutex_region_size(rg) < RP_SIZE)
    return 4;
#ifdef _WIN32
  ru_w32_region = rg;
#endif
  base = pfutex_region_addr(rg);
  s = (struct rp_slot *)(void *)(base + RP_CTL_OFF) + slot;
  b = pfutex_backend();
  snprintf(s->backend, sizeof s->backend, "%s", b ? b : "(none)");

  if (strcmp(role, "wake") == 0) {
    /* wake the test once it sleeps */
    if (ru_wait_asleep(ru_parent_pid(), ru_parent_pid(), &s->test_started, NULL) != 0)
      return 5;
  }
  __atomic_store_n(&s->started, 1, __ATOMIC_SEQ_CST);
  errno = 0;
  if (strcmp(role, "wait") == 0) {
    r = pfutex(word(base, argv[4]), FUTEX_WAIT, 0, NULL, NULL, 0);
  } else if (strcmp(role, "wake") == 0) {
    r = pfutex_wake(word(base, argv[4]), PFUTEX_BITSET_MATCH_ANY, 1, 0);
  } else if (strcmp(role, "wake_now") == 0) {
    r = pfutex(word(base, argv[4]), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  } else if (strcmp(role, "cmp_requeue") == 0 && argc == 9) {
    r = pfutex(word(base, argv[4]), FUTEX_CMP_REQUEUE, (uint32_t)atoi(argv[7]),
               NR2(atoi(argv[8])), word(base, argv[6]), (uint32_t)strtoul(argv[5], NULL, 0));
  } else if (strcmp(role, "wake_op") == 0 && argc == 7) {
    r = pfutex_wake_op(word(base, argv[4]), word(base, argv[5]), 1, 1,
                       (uint32_t)strtoul(argv[6], NULL, 0), 0);
  } else {
    fprintf(stderr, "region_peer: bad role %s\n", role);
    return 2;
  }
  s->err = errno;
  s->ret = r;
  __atomic_store_n(&s->done, 1, __ATOMIC_SEQ_CST);
  if (pfutex_region_close(rg) != 0)
    return 6;
  return 0;
}
