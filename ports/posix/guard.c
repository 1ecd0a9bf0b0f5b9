/* guard.c - src/os.h's pf_os_word_read on POSIX systems: a futex word read
 * without the signal a bad pointer raises.  The kernel answers EFAULT for
 * a word it cannot read (unmapped, PROT_NONE, a file page past the end of
 * its file); the emulation reads the word in user space, where the same
 * load raises SIGSEGV or SIGBUS.  A system call per read (process_vm_readv)
 * would cost every wait's fast path what the emulation exists to save, so
 * the read is guarded instead:
 *
 *   - a handler for SIGSEGV and SIGBUS, installed once, before the first
 *     guarded read (sigaction, keeping the handlers it replaces);
 *   - the reader records, in a thread-local pointer, a jump buffer
 *     (sigsetjmp without the signal mask: no system call) and the page it
 *     reads, loads the word, and clears the record;
 *   - a fault in this thread on that page while the record is set is the
 *     guarded load's: the handler unblocks the signal and jumps back, and
 *     the reader answers -EFAULT.  Any other fault goes to the handler that
 *     was there before (called as the kernel would call it), or, where
 *     that was the default action, the default action is restored and the
 *     fault happens again, so a program's own crash stays its own.
 *
 * The handler runs on the alternate signal stack where the thread has one
 * (SA_ONSTACK: a stack overflow still reaches a program's own handler).  A
 * program that installs its own SIGSEGV or SIGBUS handler after pfutex's
 * first read replaces this one: its bad futex words then fault, as every
 * load would, and nothing else changes.  If the library is unloaded, the
 * handlers it replaced are put back. */
#include "os.h"

#include <setjmp.h>
#include <signal.h>
#include <string.h>
/* The interrupted context's signal mask (uc_sigmask), where the system has
 * ucontext_t; elsewhere (OpenBSD) the handler only unblocks its signal. */
#if defined(__APPLE__)
# include <sys/ucontext.h>
# define PF_GUARD_UCONTEXT 1
#elif defined(__linux__) || defined(__FreeBSD__) || defined(__NetBSD__) || defined(__DragonFly__)
# include <ucontext.h>
# define PF_GUARD_UCONTEXT 1
#endif

#if defined(__GNUC__)
# define PF_GUARD_TLS __thread __attribute__((tls_model("initial-exec")))
#else
# define PF_GUARD_TLS __thread
#endif

struct pf_guard {
  sigjmp_buf jb;
  uintptr_t page;                  /* the page the guarded load reads */
  struct pf_guard *prev;           /* a guarded read this one's handler interrupted */
};

static PF_GUARD_TLS struct pf_guard *pf_guard_cur;
static const int pf_guard_sigs[2] = { SIGSEGV, SIGBUS };
static struct sigaction pf_guard_old[2];
/* 0 not installed, 1 being installed, 2 installed, 3 refused (reads are
 * plain loads, as before this existed) */
static unsigned int pf_guard_state;

#define PF_GUARD_PAGE(a) ((uintptr_t)(a) & ~(uintptr_t)4095)

static void
pf_guard_handler(int sig, siginfo_t *si, void *ctx)
{
  struct pf_guard *g = pf_guard_cur;
  struct sigaction *old = &pf_guard_old[sig == SIGBUS];
  /* The guarded access's fault: this thread, while the record is set, a
   * fault (si_code > 0) on the page it reads.  A SIGBUS is taken whatever
   * its address says: qemu-user reports a wrong one on some targets
   * (armhf: the next page; s390x: garbage), and nothing but the guarded
   * access runs in the window (a handler that interrupted it would have
   * to fault with SIGBUS there itself). */
  if (g && si && si->si_code > 0
      && (PF_GUARD_PAGE(si->si_addr) == g->page || sig == SIGBUS)) {
    /* The jump keeps no mask: put back the one the fault interrupted (the
     * context's; a sanitizer's wrapper may have blocked more than sig). */
    sigset_t s;
    pf_guard_cur = g->prev;
#ifdef PF_GUARD_UCONTEXT
    if (ctx) {
      s = ((ucontext_t *)ctx)->uc_sigmask;
      pthread_sigmask(SIG_SETMASK, &s, NULL);
      siglongjmp(g->jb, 1);
    }
#endif
    sigemptyset(&s);
    sigaddset(&s, sig);
    pthread_sigmask(SIG_UNBLOCK, &s, NULL);
    siglongjmp(g->jb, 1);
  }
  if (old->sa_flags & SA_SIGINFO) {
    old->sa_sigaction(sig, si, ctx);
    return;
  }
  if (old->sa_handler == SIG_IGN) {
    if (si && si->si_code <= 0)
      return;                      /* sent, not raised by a fault: ignored */
  } else if (old->sa_handler != SIG_DFL) {
    old->sa_handler(sig);
    return;
  }
  /* The default action: put it back; a fault happens again on return, a
   * signal sent by kill is sent again. */
  {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    if (!si || si->si_code <= 0)
      raise(sig);
  }
}

static int
pf_guard_install(void)
{
  unsigned int st = AO_int_load_acquire(&pf_guard_state);
  struct sigaction sa;
  int i;
  if (PF_LIKELY(st == 2))
    return 1;
  if (st != 0 || !AO_int_compare_and_swap_full(&pf_guard_state, 0, 1))
    return 0;                      /* another thread (or this one, below a handler) installs */
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = pf_guard_handler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (i = 0; i < 2; i++)
    if (sigaction(pf_guard_sigs[i], &sa, &pf_guard_old[i]) != 0) {
      while (--i >= 0)
        sigaction(pf_guard_sigs[i], &pf_guard_old[i], NULL);
      AO_int_store_release(&pf_guard_state, 3);
      return 0;
    }
  AO_int_store_release(&pf_guard_state, 2);
  return 1;
}

__attribute__((destructor)) static void
pf_guard_uninstall(void)
{
  struct sigaction cur;
  int i;
  if (AO_int_load_acquire(&pf_guard_state) != 2)
    return;
  for (i = 0; i < 2; i++)
    if (sigaction(pf_guard_sigs[i], NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO)
        && cur.sa_sigaction == pf_guard_handler)
      sigaction(pf_guard_sigs[i], &pf_guard_old[i], NULL);
}

/* The touch's addend: 0, read from a volatile so that no compiler can
 * see the add is idempotent.  clang lowers an atomic add of a constant 0
 * on x86 to a fenced load (LLVM's idempotent-RMW lowering), which never
 * faults on a read-only page: the touch must be a write. */
static volatile unsigned int pf_guard_zero;

/* Under ThreadSanitizer an atomic read-modify-write is a call into its
 * runtime, which holds a lock of its own while it touches the word: a
 * fault there, ended by the guard's jump, would leave that lock held and
 * the thread's next atomic op would wait for it forever (a shared wait on
 * a read-only page did, in CI's TSan build).  The touch is then one
 * instruction the runtime does not see, where the CPU has one; a load
 * and the write faults are all the guard needs of it.  (Reads are plain
 * acquire loads, which take no lock there.) */
#if defined(__SANITIZE_THREAD__)
# define PF_GUARD_TSAN 1
#elif defined(__has_feature)
# if __has_feature(thread_sanitizer)
#  define PF_GUARD_TSAN 1
# endif
#endif
#if defined(PF_GUARD_TSAN) && (defined(__x86_64__) || defined(__i386__))
# define PF_GUARD_TOUCH(p) \
  __asm__ __volatile__("lock; addl %1, %0" : "+m"(*(p)) : "r"(pf_guard_zero) : "memory", "cc")
#elif defined(PF_GUARD_TSAN) && defined(__aarch64__)
# define PF_GUARD_TOUCH(p)                                                                \
  do {                                                                                  \
    unsigned int pf_v_, pf_f_;                                                          \
    __asm__ __volatile__("1: ldaxr %w0, %2\n\tadd %w0, %w0, %w3\n\tstlxr %w1, %w0, %2\n\t" \
                         "cbnz %w1, 1b"                                                 \
                         : "=&r"(pf_v_), "=&r"(pf_f_), "+Q"(*(p))                       \
                         : "r"(pf_guard_zero)                                           \
                         : "memory");                                                   \
  } while (0)
#else
# define PF_GUARD_TOUCH(p) ((void)AO_int_fetch_and_add_full((p), pf_guard_zero))
#endif

/* One access to the word at p, guarded: a load into *v, or (v NULL) an
 * atomic add of 0, which writes without changing the word.  Out of line,
 * and the only frame between sigsetjmp and the access: nothing the jump
 * back could leave half done. */
static PF_NOINLINE int
pf_guard_access(const uint32_t *p, uint32_t *v)
{
  struct pf_guard g;
  if (pf_addr_unreadable(p))
    return -EFAULT;
  if (!pf_guard_install()) {
    int ret;
    if (v)
      *v = AO_int_load_acquire((const volatile unsigned int *)p);
    else if ((ret = pf_os_probe_write(p)) < 0)    /* unguarded: ask the OS first */
      return ret;
    else
      PF_GUARD_TOUCH((volatile unsigned int *)(uintptr_t)p);
    return 0;
  }
  g.page = PF_GUARD_PAGE(p);
  g.prev = pf_guard_cur;
  if (sigsetjmp(g.jb, 0))
    return -EFAULT;                /* the handler has unlinked g */
  AO_compiler_barrier();
  pf_guard_cur = &g;
  AO_compiler_barrier();
  if (v)
    *v = AO_int_load_acquire((const volatile unsigned int *)p);
  else
    PF_GUARD_TOUCH((volatile unsigned int *)(uintptr_t)p);
  AO_compiler_barrier();
  pf_guard_cur = g.prev;
  return 0;
}

int
pf_os_word_read(const uint32_t *p, uint32_t *v)
{
  return pf_guard_access(p, v);
}

int
pf_os_word_touch(uint32_t *p)
{
  return pf_guard_access(p, NULL);
}
