/* mem_fallback: the library's memory checks when their first tools are
 * refused, as under qemu-user (process_vm_readv: ENOSYS; madvise: the
 * advice ignored, 0) or a container's seccomp policy (process_vm_readv:
 * EPERM).  ports/linux/mem.c then copies untrusted timeouts through a pipe
 * and reads write permission from /proc/self/maps.
 *
 * The test installs a seccomp filter that answers process_vm_readv with
 * ENOSYS (first round) or EPERM (second) and MADV_POPULATE_WRITE with 0
 * without doing anything, checks the filter bites, then runs the bad
 * pointer tests (tests/bad_timeout, tests/readonly, tests/harden_mem) under
 * it, relaying each of their TAP results as one of its own: every one of
 * their checks (EFAULT, never a signal, the kernel's answer) must hold on
 * the fallbacks too.  Finally it counts its open descriptors around 2000
 * fallback copies (no pipe leaks), timeouts good and bad.
 *
 * Where no filter can be installed (qemu-user refuses PR_SET_SECCOMP) the
 * test skips: there the whole suite already runs on these fallbacks. */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs seccomp, fork() and /proc");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pfutex.h>
#include "pft.h"

#if defined(__linux__) && defined(HAVE_LINUX_SECCOMP_H) && defined(HAVE_LINUX_FILTER_H) \
    && defined(HAVE_SYS_PRCTL_H)
# include <linux/audit.h>
# include <linux/filter.h>
# include <linux/seccomp.h>
# include <sys/mman.h>
# include <sys/prctl.h>
# include <sys/syscall.h>
# include <sys/uio.h>
# include <sys/wait.h>

#ifndef MADV_POPULATE_WRITE
# define MADV_POPULATE_WRITE 23
#endif

/* process_vm_readv -> err; madvise(_, _, MADV_POPULATE_WRITE) -> 0, not run. */
static int
install_filter(int err)
{
  /* the low 32 bits of args[2] */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  const unsigned int arg2 = offsetof(struct seccomp_data, args[2]) + 4;
#else
  const unsigned int arg2 = offsetof(struct seccomp_data, args[2]);
#endif
  struct sock_filter f[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_madvise, 0, 3),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg2),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_POPULATE_WRITE, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog;
  prog.len = (unsigned short)(sizeof f / sizeof f[0]);
  prog.filter = f;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return -1;
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

static char dir[4096];

/* Run tests/NAME under the filter; relay each result line. */
static void
relay(const char *name, int err)
{
  char path[4200], line[4096];
  int fds[2], status, results = 0, bad = 0;
  FILE *in;
  pid_t pid;

  snprintf(path, sizeof path, "%s/%s", dir, name);
  fflush(stdout);
  if (pipe(fds) != 0)
    sysbail("pipe");
  if ((pid = fork()) == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    if (install_filter(err) != 0)
      _exit(120);
    execl(path, path, (char *)NULL);
    _exit(121);
  }
  close(fds[1]);
  if (!(in = fdopen(fds[0], "r")))
    sysbail("fdopen");
  while (fgets(line, sizeof line, in)) {
    char *desc;
    int is_not = strncmp(line, "not ok ", 7) == 0;
    line[strcspn(line, "\n")] = '\0';
    if (!is_not && strncmp(line, "ok ", 3) != 0)
      continue;                                  /* plan, comments */
    results++;
    desc = line + (is_not ? 7 : 3);
    desc += strspn(desc, "0123456789");
    desc += strspn(desc, " -");
    if (!is_not && (strstr(desc, "# SKIP") || strstr(desc, "# skip"))) {
      const char *why = strstr(desc, "# SKIP") ? strstr(desc, "# SKIP") : strstr(desc, "# skip");
      skip("%s (%s): %s", name, err == ENOSYS ? "ENOSYS" : "EPERM", why + 6);
      continue;
    }
    bad += is_not;
    ok(!is_not, "%s (process_vm_readv %s, madvise ignored): %s", name,
       err == ENOSYS ? "ENOSYS" : "EPERM", desc);
  }
  fclose(in);
  waitpid(pid, &status, 0);
  ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && results > 0,
     "%s under the filter: %d results, %d not ok, exit %d%s", name, results, bad,
     WIFEXITED(status) ? WEXITSTATUS(status) : -1,
     WIFSIGNALED(status) ? " (killed by a signal)" : "");
}

static int
count_fds(void)
{
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  int n = 0;
  if (!d)
    return -1;
  while ((e = readdir(d)) != NULL)
    n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

int
main(int argc, char **argv)
{
  static const char *const progs[] = { "bad_timeout", "readonly", "harden_mem" };
  static const int errs[] = { ENOSYS, EPERM };
  char *slash;
  ssize_t n;
  int e, i;
  const char *no_filter;

  (void)argc;
  pft_watchdog(600);
  /* the test programs beside this one */
  n = readlink("/proc/self/exe", dir, sizeof dir - 1);
  if (n <= 0)
    snprintf(dir, sizeof dir, "%s", argv[0]);
  else
    dir[n] = '\0';
  if ((slash = strrchr(dir, '/')) != NULL)
    *slash = '\0';

  if ((no_filter = pft_seccomp_unavailable()) != NULL)
    skip_all("cannot install a seccomp filter here (%s): under qemu-user every test "
             "already runs on these fallbacks", no_filter);
  plan_lazy();

  for (e = 0; e < 2; e++) {
    /* the filter bites, in a child */
    int status;
    pid_t pid = fork();
    if (pid == 0) {
      char src[8] = "abcdefg", dst[8];
      struct iovec l = { dst, sizeof dst }, r = { src, sizeof src };
      void *ro;
      if (install_filter(errs[e]) != 0)
        _exit(1);
      if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != -1 || errno != errs[e])
        _exit(2);
      ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (ro == MAP_FAILED || madvise(ro, 4096, MADV_POPULATE_WRITE) != 0)
        _exit(3);                  /* the kernel says EINVAL here: the filter must answer 0 */
      _exit(0);
    }
    waitpid(pid, &status, 0);
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
       "the filter refuses process_vm_readv with %s and ignores MADV_POPULATE_WRITE (exit %d)",
       errs[e] == ENOSYS ? "ENOSYS" : "EPERM", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    for (i = 0; i < 3; i++)
      relay(progs[i], errs[e]);
  }

  /* No descriptor leaks: 2000 copies through the pipe, in a child. */
  {
    int status;
    pid_t pid = fork();
    if (pid == 0) {
      static uint32_t word;
      long pg = sysconf(_SC_PAGESIZE);
      char *bad = mmap(NULL, (size_t)pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      struct timespec good;
      int before, after, k, wrong = 0;
      if (bad == MAP_FAILED || install_filter(ENOSYS) != 0)
        _exit(100);
      /* a shared op's mapping query keeps one descriptor, opened once
       * (ports/linux/objid.c): open it before counting */
      (void)pfutex_wake(&word, PFUTEX_BITSET_MATCH_ANY, 1, 0);
      before = count_fds();
      for (k = 0; k < 2000; k++) {
        int r;
        clock_gettime(CLOCK_MONOTONIC, &good);
        pft_timespec_add_ns(&good, 1000);
        r = pfutex_wait(&word, 0, PFUTEX_BITSET_MATCH_ANY, 0,
                        (k & 1) ? &good : (const struct timespec *)bad, PFUTEX_CLOCK_MONOTONIC);
        if (r != -1 || errno != ((k & 1) ? ETIMEDOUT : EFAULT))
          wrong++;
      }
      after = count_fds();
      printf("# descriptors before %d, after %d; %d wrong answers\n", before, after, wrong);
      fflush(stdout);
      _exit(before >= 0 && after == before && wrong == 0 ? 0 : 1);
    }
    waitpid(pid, &status, 0);
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
       "2000 timed waits on the fallback (1000 good timeouts: ETIMEDOUT, 1000 on a PROT_NONE "
       "page: EFAULT), no descriptor left open");
  }
  return 0;
}

#else
int
main(void)
{
  skip_all("needs Linux seccomp");
}
#endif
#endif /* !_WIN32 */
