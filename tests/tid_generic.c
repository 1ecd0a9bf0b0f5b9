/* tid_generic: the thread ids of hosts other than Linux and Windows
 * (src/tid.c's generic part: the pid beside a slot of the process),
 * compiled into this test under other names and run here, with a small
 * slot pool (PF_TID_PID_BITS 26: 15 slots) so that its limits show:
 *   - an id fits 30 bits, is not 0, and carries this process's pid;
 *   - 15 threads alive at once have 15 different ids, each alive;
 *   - once they have exited their ids are not alive (their slots given
 *     back), and new threads take those slots again, still all different;
 *   - a 16th live thread shares a slot (the documented limit);
 *   - a fork child's id carries its own pid; alive while the child lives,
 *     not once it is reaped; the parent's own id stays alive. */
#ifdef _WIN32
#include "basic.h"
int
main(void)
{
  skip_all("Windows: its thread ids are ports/win32/os.c's (tests/futex_ext)");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#define PF_TID_GENERIC 1
#define PF_TID_PID_BITS 26
#define pf_os_tid pf_test_generic_tid
#define pf_os_tid_alive pf_test_generic_tid_alive
#include "../src/tid.c"

#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include "pft.h"

#define NT 15

static pid_t ids[NT + 1];
static volatile int release;

static void *
taker(void *arg)
{
  __atomic_store_n(&ids[(intptr_t)arg], pf_test_generic_tid(), __ATOMIC_RELEASE);
  while (!__atomic_load_n(&release, __ATOMIC_ACQUIRE))
    usleep(500);
  return NULL;
}

static int
distinct(int n)
{
  int i, j;
  for (i = 0; i < n; i++)
    for (j = i + 1; j < n; j++)
      if (ids[i] == ids[j])
        return 0;
  return 1;
}

static int
all_alive(int n)
{
  int i;
  for (i = 0; i < n; i++)
    if (!pf_test_generic_tid_alive((uint32_t)ids[i]))
      return 0;
  return 1;
}

static int
none_alive(int n)
{
  int i;
  for (i = 0; i < n; i++)
    if (pf_test_generic_tid_alive((uint32_t)ids[i]))
      return 0;
  return 1;
}

/* n threads take ids and wait; the ids in ids[0..n). */
static void
round_of(int n, pthread_t *t)
{
  int i;
  memset(ids, 0, sizeof ids);
  __atomic_store_n(&release, 0, __ATOMIC_RELEASE);
  for (i = 0; i < n; i++)
    if (pthread_create(&t[i], NULL, taker, (void *)(intptr_t)i) != 0)
      sysbail("pthread_create");
  for (i = 0; i < n; i++)
    while (!__atomic_load_n(&ids[i], __ATOMIC_ACQUIRE))
      usleep(200);
}

static void
end_round(int n, pthread_t *t)
{
  int i;
  __atomic_store_n(&release, 1, __ATOMIC_RELEASE);
  for (i = 0; i < n; i++)
    pthread_join(t[i], NULL);
}

int
main(void)
{
  pthread_t t[NT + 1];
  pid_t me = pf_test_generic_tid(), p, kid = 0;
  int st, fd[2], go[2];
  plan(12);
  ok(me > 0 && (uint32_t)me <= 0x3fffffffu && (uint32_t)me >> 4 == (uint32_t)getpid(),
     "the main thread's id %#x: 30 bits, not 0, this pid beside slot %u", (unsigned)me,
     (unsigned)me & 15u);
  ok(pf_test_generic_tid() == me && pf_test_generic_tid_alive((uint32_t)me), "stable, and alive");

  round_of(NT - 1, t);                 /* with the main thread's: all 15 slots */
  ids[NT - 1] = me;
  ok(distinct(NT), "%d live threads (the main one too): %d different ids", NT, NT);
  ok(all_alive(NT), "each alive");
  end_round(NT - 1, t);
  ok(none_alive(NT - 1), "exited: their ids are not alive (slots given back)");
  round_of(NT - 1, t);
  ids[NT - 1] = me;
  ok(distinct(NT) && all_alive(NT), "new threads take those slots again: %d different ids, alive", NT);
  /* one more than the slots: shares one (the limit) */
  {
    pthread_t x;
    __atomic_store_n(&ids[NT], 0, __ATOMIC_RELEASE);
    if (pthread_create(&x, NULL, taker, (void *)(intptr_t)NT) != 0)
      sysbail("pthread_create");
    while (!__atomic_load_n(&ids[NT], __ATOMIC_ACQUIRE))
      usleep(200);
    ok(!distinct(NT + 1), "a 16th live thread shares a slot (the documented limit)");
    end_round(NT - 1, t);
    pthread_join(x, NULL);
  }

  if (pipe(fd) != 0 || pipe(go) != 0)
    sysbail("pipe");
  p = fork();
  if (p < 0)
    sysbail("fork");
  if (p == 0) {
    char c;
    pid_t k = pf_test_generic_tid();
    if (write(fd[1], &k, sizeof k) != (ssize_t)sizeof k)
      _exit(2);
    if (read(go[0], &c, 1) < 0)
      _exit(3);
    _exit(0);
  }
  if (read(fd[0], &kid, sizeof kid) != (ssize_t)sizeof kid)
    sysbail("read");
  ok((uint32_t)kid >> 4 == (uint32_t)p, "a fork child's id %#x carries its pid %d", (unsigned)kid,
     (int)p);
  ok(pf_test_generic_tid_alive((uint32_t)kid), "alive while the child lives");
  if (write(go[1], "x", 1) != 1)
    sysbail("write");
  waitpid(p, &st, 0);
  ok(!pf_test_generic_tid_alive((uint32_t)kid), "not alive once it is reaped");
  ok(pf_test_generic_tid_alive((uint32_t)me), "the parent's own id stays alive");
  ok(pf_test_generic_tid() == me, "and unchanged");
  return 0;
}
#endif
