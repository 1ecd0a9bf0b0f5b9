/* live_start.c - the "start" liveness mechanism of regions (src/os.h,
 * src/region/live.c), white-box, where it can run here: Linux's start
 * times (ports/linux/proc.c).  Windows' regions use it (pid and creation
 * time); its code is the same.
 *
 * An entry claimed by this process is held; a second claim is EBUSY; a
 * stopped owner is still alive; a child that exited is gone, as a zombie
 * and once reaped; the same pid with another start time (pid reuse) is
 * gone; a claim in progress (PF_RGN_CLAIMING) is judged by its pid; a
 * released entry is free. */
#include "config.h"
#include <pfutex.h>

#include "basic.h"

#if !defined(PF_HAVE_LIVE_START) || !defined(__linux__)
int
main(void)
{
  skip_all("the start mechanism is built on Linux and Windows only; this test runs on Linux");
  return 0;
}
#else
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pft.h"
#include "region/internal.h"
#include "os.h"

static struct pf_rgn_proc *e;     /* shared with the children */

static void
own(struct pf_rgn_proc *p)        /* what the caller of a claim does */
{
  AO_int_store_release(&p->pid, (uint32_t)getpid());
}

int
main(void)
{
  pid_t c;
  int st, ret;
  uint32_t lo;

  pft_watchdog(30);
  e = mmap(NULL, 4 * sizeof *e, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (e == MAP_FAILED)
    sysbail("mmap");
  memset(e, 0, 4 * sizeof *e);

  /* This process's start time as it reads it must be what another process
   * reads for its pid: not so under qemu-user, which makes up
   * /proc/<own pid>/stat. */
  {
    uint64_t mine = 0;
    if (pf_os_proc_start((uint32_t)getpid(), &mine) != 1)
      skip_all("this process cannot read its own start time here");
    e[3].start_lo = (uint32_t)mine;
    e[3].start_hi = (uint32_t)(mine >> 32);
    if ((c = fork()) == 0) {
      uint64_t t = 0;
      _exit(pf_os_proc_start((uint32_t)getppid(), &t) == 1 && t == mine ? 0 : 1);
    }
    waitpid(c, &st, 0);
    memset(&e[3], 0, sizeof e[3]);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      skip_all("another process reads another start time for this one (qemu-user emulates "
               "/proc/<own pid>/stat): the mechanism cannot work here");
  }
  plan(10);
  is_int(0, pf_live_claim(PF_LIVE_START, -1, 0, &e[0]), "a free entry is claimed");
  own(&e[0]);
  /* a child asks: the parent holds it, and a claim of its entry is EBUSY */
  if ((c = fork()) == 0)
    _exit(pf_live_held(PF_LIVE_START, -1, 0, &e[0]) == 1
          && pf_live_claim(PF_LIVE_START, -1, 0, &e[0]) == -EBUSY ? 0 : 1);
  waitpid(c, &st, 0);
  ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "another process sees it held; its claim is EBUSY");

  /* a child owns entry 1 and stops: still alive; then it exits */
  if ((c = fork()) == 0) {
    if (pf_live_claim(PF_LIVE_START, -1, 1, &e[1]) != 0)
      _exit(2);
    own(&e[1]);
    raise(SIGSTOP);
    _exit(0);
  }
  waitpid(c, &st, WUNTRACED);
  ok(WIFSTOPPED(st) && pf_live_held(PF_LIVE_START, -1, 1, &e[1]) == 1,
     "a stopped owner is alive");
  kill(c, SIGCONT);
  while (waitid(P_PID, (id_t)c, NULL, WEXITED | WNOWAIT) != 0)
    ;
  is_int(0, pf_live_held(PF_LIVE_START, -1, 1, &e[1]), "an owner that exited (a zombie) is gone");
  waitpid(c, &st, 0);
  is_int(0, pf_live_held(PF_LIVE_START, -1, 1, &e[1]), "... and once reaped");
  is_int(0, pf_live_claim(PF_LIVE_START, -1, 1, &e[1]), "its entry is claimed again");
  own(&e[1]);

  /* pid reuse: the pid of a live process, another start time */
  e[2] = e[1];
  lo = AO_int_load(&e[2].start_lo);
  AO_int_store(&e[2].start_lo, lo + 1);
  is_int(0, pf_live_held(PF_LIVE_START, -1, 2, &e[2]),
         "a live pid whose start time is not the entry's: gone (pid reuse)");

  /* a claim in progress: judged by its pid */
  AO_int_store(&e[3].pid, PF_RGN_CLAIMING | (uint32_t)getpid());
  ret = pf_live_held(PF_LIVE_START, -1, 3, &e[3]);
  if ((c = fork()) == 0)
    _exit(0);
  waitpid(c, &st, 0);
  AO_int_store(&e[3].pid, PF_RGN_CLAIMING | (uint32_t)c);
  ok(ret == 1 && pf_live_held(PF_LIVE_START, -1, 3, &e[3]) == 0,
     "a claim in progress: alive while its claimer is, gone after");

  /* released: the caller clears the pid */
  pf_live_release(PF_LIVE_START, -1, 1, &e[1]);
  AO_int_store(&e[1].pid, 0);
  is_int(0, pf_live_held(PF_LIVE_START, -1, 1, &e[1]), "a released entry is free");
  is_int(1, pf_live_supported(PF_LIVE_START), "the mechanism is supported here");
  return 0;
}
#endif
