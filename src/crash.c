/* crash.c - the crash points (configure --enable-crash-points; testing
 * only): named steps inside the lock, queue, requeue, slot and region code
 * where a test has the process kill or stop itself (src/crash.h).  The
 * engine's and the regions' alike. */
#include "crash.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* PFUTEX_CRASH_AT=name:k kills this process (SIGKILL) the k-th time (from
 * 1) it reaches crash point `name`; PFUTEX_STOP_AT=name:k stops it there
 * instead (SIGSTOP: a holder stopped inside its critical section, until
 * someone sends SIGCONT).  White-box tests may set the variables below
 * directly. */
const char *pf_crash_name;
long pf_crash_left;
const char *pf_stop_name;
long pf_stop_left;
/* Every crash point, for the tests to enumerate. */
const char *const pf_crash_points[] = {
  "wait_queued", "wait_counted", "push_marked", "wait_pushed", "dequeue_unlinked",
  "wake_locked", "drain_taken", "append_half", "unlink_half", "wake_marked", "wake_unlocked",
  "wake_op_locked", "wake_op_stored", "requeue_locked", "requeue_rekeyed", "requeue_moved",
  "slot_claimed", "slot_freeing", "proc_claiming", "lock_takeover", "rebuild_mid",
  "region_creating", "xmove_moved", "xmove_published", "xmove_given", NULL
};
static int pf_crash_env_read;

static void
pf_crash_env(const char *var, const char **name, long *left, char *buf, size_t len)
{
  const char *e = getenv(var);
  if (e && !*name) {
    const char *colon = strchr(e, ':');
    size_t n = colon ? (size_t)(colon - e) : strlen(e);
    if (n < len) {
      memcpy(buf, e, n);
      buf[n] = 0;
      *name = buf;
      *left = colon ? atol(colon + 1) : 1;
    }
  }
}

void
pf_crash_point(const char *name)
{
  if (!pf_crash_env_read) {
    static char cbuf[64], sbuf[64];
    pf_crash_env_read = 1;
    pf_crash_env("PFUTEX_CRASH_AT", &pf_crash_name, &pf_crash_left, cbuf, sizeof cbuf);
    pf_crash_env("PFUTEX_STOP_AT", &pf_stop_name, &pf_stop_left, sbuf, sizeof sbuf);
  }
  if (pf_crash_name && strcmp(name, pf_crash_name) == 0 && --pf_crash_left == 0)
    kill(getpid(), SIGKILL);
  if (pf_stop_name && strcmp(name, pf_stop_name) == 0 && --pf_stop_left == 0)
    kill(getpid(), SIGSTOP);
}
