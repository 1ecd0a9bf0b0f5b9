/* tid_generic: the thread ids of hosts other than Linux and Windows
 * (src/tid.c's generic part: the pid beside a slot of the process),
 * compiled into this test under other names and run here, with a small
 * slot pool (PF_TID_PID_BITS 26: 15 slots) so that its limits show:
 *   - an id fits 30 bits, is not 0, and carries this process's pid;
 *   - 15 threads alive at once have 15 different ids, each alive;
 *   - once they have exited their ids are not alive (their slots given
 *     back), and new threads take those slots again, still all different;
 *   - a 16th live thread shares a slot (the documented limit), and its
 *     exit leaves the other thread of that slot alive;
 *   - a fork child's id carries its own pid; alive while the child lives,
 *     not once it is reaped; the parent's own id stays alive;
 *   - another process's threads as that process published them (src/tid.c
 *     (T)): a live thread alive, an exited one not, a killed process's
 *     ids not even before it is reaped; an object its pid did not lock, or
 *     one others could write, never says a thread is gone. */
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
#define pf_os_tid_foreign pf_test_generic_tid_foreign
#include "../src/tid.c"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include "pft.h"

#define NT 15

static pid_t ids[NT + 1];
static volatile int release;

static volatile int release_x;       /* the 16th thread's own */

static void *
taker(void *arg)
{
  intptr_t i = (intptr_t)arg;
  volatile int *rel = i == NT ? &release_x : &release;
  __atomic_store_n(&ids[i], pf_test_generic_tid(), __ATOMIC_RELEASE);
  while (!__atomic_load_n(rel, __ATOMIC_ACQUIRE))
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

/* ---- another process's threads (T) ---------------------------------- */
static int kid_go[2];

static void *
kid_stay(void *arg)
{
  char c;
  __atomic_store_n((pid_t *)arg, pf_test_generic_tid(), __ATOMIC_RELEASE);   /* read with acquire */
  if (read(kid_go[0], &c, 1) != 1)   /* until the parent says */
    _exit(4);
  return NULL;
}

static void *
kid_leave(void *arg)
{
  *(pid_t *)arg = pf_test_generic_tid();
  return NULL;
}

static pid_t
reap_later(pid_t p)
{
  siginfo_t si;
  /* dead, not reaped: a zombie (kill(p, 0) still finds it) */
  while (waitid(P_PID, (id_t)p, &si, WEXITED | WNOWAIT) != 0)
    if (errno != EINTR)
      sysbail("waitid");
  return p;
}

/* A third process makes pid's object (mode, bits all clear) and holds its
 * lock until killed; returns its pid once it holds it. */
static pid_t
forge(uint32_t pid, mode_t mode)
{
  int rd[2];
  char c;
  pid_t f;
  if (pipe(rd) != 0)
    sysbail("pipe");
  f = fork();
  if (f < 0)
    sysbail("fork");
  if (f == 0) {
    int fd;
    pf_tid_pub_remove(pid);
    fd = pf_tid_pub_open(pid, O_RDWR | O_CREAT | O_EXCL);
    if (fd < 0 || fchmod(fd, mode) != 0 || ftruncate(fd, (off_t)PF_TID_PUB_SIZE) != 0
        || pf_os_lock_claim(fd, 0) != 0 || write(rd[1], "r", 1) != 1)
      _exit(2);
    for (;;)
      pause();
  }
  close(rd[1]);
  if (read(rd[0], &c, 1) != 1)
    bail("the forger could not make the object of pid %u", (unsigned)pid);
  close(rd[0]);
  return f;
}

static void
other_process(void)
{
  int res[2], st;
  pid_t p, got[3], p2;
  char c;
  if (pipe(res) != 0 || pipe(kid_go) != 0)
    sysbail("pipe");
  p = fork();
  if (p < 0)
    sysbail("fork");
  if (p == 0) {
    pthread_t a, b;
    pid_t ids3[3] = { 0, 0, 0 };
    ids3[0] = pf_test_generic_tid();
    if (pthread_create(&b, NULL, kid_leave, &ids3[2]) != 0 || pthread_join(b, NULL) != 0
        || pthread_create(&a, NULL, kid_stay, &ids3[1]) != 0)
      _exit(2);
    while (!__atomic_load_n(&ids3[1], __ATOMIC_ACQUIRE))
      usleep(200);
    if (write(res[1], ids3, sizeof ids3) != (ssize_t)sizeof ids3)
      _exit(3);
    pthread_join(a, NULL);           /* the parent's first byte */
    if (write(res[1], "j", 1) != 1)
      _exit(3);
    for (;;)
      pause();                       /* killed */
  }
  if (read(res[0], got, sizeof got) != (ssize_t)sizeof got)
    sysbail("read");
  ok(pf_test_generic_tid_alive((uint32_t)got[0]) && pf_test_generic_tid_alive((uint32_t)got[1]),
     "another process's live threads (%#x, %#x): alive", (unsigned)got[0], (unsigned)got[1]);
  ok(!pf_test_generic_tid_alive((uint32_t)got[2]),
     "a thread that exited in another live process (%#x): not alive", (unsigned)got[2]);
  if (write(kid_go[1], "x", 1) != 1 || read(res[0], &c, 1) != 1)
    sysbail("pipe");
  ok(!pf_test_generic_tid_alive((uint32_t)got[1]) && pf_test_generic_tid_alive((uint32_t)got[0]),
     "its other thread exits: not alive; its main thread still is");
  kill(p, SIGKILL);
  reap_later(p);
  ok(kill(p, 0) == 0 && !pf_test_generic_tid_alive((uint32_t)got[0]),
     "killed, not yet reaped (a zombie kill(pid, 0) finds): its ids not alive");
  waitpid(p, &st, 0);
  pf_tid_pub_remove((uint32_t)p);

  /* a live process that published nothing; an object made for its pid by
   * another process (this one) must not speak for it */
  p2 = fork();
  if (p2 < 0)
    sysbail("fork");
  if (p2 == 0) {
    for (;;)
      pause();
  }
  {
    uint32_t t2 = ((uint32_t)p2 << PF_TID_SLOT_BITS) | 3u;
    pid_t f;
    f = forge((uint32_t)p2, 0644);
    ok(pf_test_generic_tid_alive(t2),
       "an object locked by another pid than its name's (bits all clear): alive, never gone");
    kill(f, SIGKILL);
    waitpid(f, &st, 0);
    f = forge((uint32_t)p2, 0666);
    ok(pf_test_generic_tid_alive(t2), "nor one others could write");
    kill(f, SIGKILL);
    waitpid(f, &st, 0);
    {
      int fd = pf_tid_pub_open((uint32_t)p2, O_RDWR);
      if (fd < 0 || fchmod(fd, 0644) != 0)
        sysbail("fchmod");
      close(fd);
    }
    ok(!pf_test_generic_tid_alive(t2),
       "our own user's object that nobody holds: its maker is gone, no id of it is out");
    pf_tid_pub_remove((uint32_t)p2);
  }
  kill(p2, SIGKILL);
  waitpid(p2, &st, 0);
}

int
main(void)
{
  pthread_t t[NT + 1];
  pid_t me = pf_test_generic_tid(), p, kid = 0;
  int st, fd[2], go[2];
  plan(21);
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
    __atomic_store_n(&release_x, 1, __ATOMIC_RELEASE);
    pthread_join(x, NULL);
    ok(all_alive(NT), "it exits: the thread it shared the slot with still counts as alive");
    end_round(NT - 1, t);
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
  ok(pf_test_generic_tid_foreign((uint32_t)kid) && !pf_test_generic_tid_foreign((uint32_t)me),
     "the child's id is another process's (a private PI op on it: EPERM), the parent's own is not");
  if (write(go[1], "x", 1) != 1)
    sysbail("write");
  waitpid(p, &st, 0);
  ok(!pf_test_generic_tid_alive((uint32_t)kid) && !pf_test_generic_tid_foreign((uint32_t)kid),
     "not alive once it is reaped (nor another process's)");
  ok(pf_test_generic_tid_alive((uint32_t)me), "the parent's own id stays alive");
  ok(pf_test_generic_tid() == me, "and unchanged");
  pf_tid_pub_remove((uint32_t)p);   /* the child ended by _exit: no destructor ran */
  other_process();
  return 0;
}
#endif
