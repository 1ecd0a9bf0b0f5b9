/* kernel_diff: differential parity with the kernel.  Each case is one
 * non-blocking futex call (value mismatches, errors, wakes and requeues with
 * nobody waiting, zero or past timeouts, bad addresses and timespecs,
 * FUTEX_CLOCK_REALTIME combinations, unknown ops, WAKE_OP encodings on a
 * scratch word), run once as syscall(SYS_futex, ...) and once as pfutex(...)
 * on fresh copies of the same memory; the return value, errno and the final
 * memory must all agree.  One TAP line per case. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include "pft.h"

#if defined(__linux__)
# include <sys/mman.h>
# include <sys/syscall.h>
# include <unistd.h>
#endif

#if defined(__linux__) && defined(SYS_futex)

enum addr { A_W0, A_W1, A_W2, A_NULL, A_MIS, A_UNMAP, A_RO, A_TOP, A_PASTTOP };
enum tmo { T_NULL, T_ZERO, T_PAST, T_NEGNS, T_BIGNS, T_NEGS, T_VAL2 };

struct kcase {
  const char *name;
  int op;
  enum addr a1;
  uint32_t val;
  enum tmo t;
  int val2;
  enum addr a2;
  uint32_t val3;
  uint32_t init[4];
};

#define P 128
#define RT 256
#define OPE(op, oparg, cmp, cmparg) PFUTEX_OP(op, oparg, cmp, cmparg)

static const struct kcase cases[] = {
  /* FUTEX_WAIT */
  { "WAIT_PRIVATE value mismatch", 0 | P, A_W0, 0, T_NULL, 0, A_W0, 0, { 1 } },
  { "WAIT shared value mismatch", 0, A_W0, 0, T_NULL, 0, A_W0, 0, { 1 } },
  { "WAIT_PRIVATE zero timeout", 0 | P, A_W0, 7, T_ZERO, 0, A_W0, 0, { 7 } },
  { "WAIT shared zero timeout", 0, A_W0, 7, T_ZERO, 0, A_W0, 0, { 7 } },
  { "WAIT_PRIVATE mismatch with zero timeout", 0 | P, A_W0, 6, T_ZERO, 0, A_W0, 0, { 7 } },
  { "WAIT_PRIVATE misaligned", 0 | P, A_MIS, 0, T_ZERO, 0, A_W0, 0, { 0 } },
  { "WAIT shared misaligned", 0, A_MIS, 0, T_ZERO, 0, A_W0, 0, { 0 } },
  { "WAIT_PRIVATE NULL", 0 | P, A_NULL, 0, T_ZERO, 0, A_W0, 0, { 0 } },
  { "WAIT shared NULL", 0, A_NULL, 0, T_ZERO, 0, A_W0, 0, { 0 } },
  { "WAIT_PRIVATE unmapped page", 0 | P, A_UNMAP, 0, T_ZERO, 0, A_W0, 0, { 0 } },
  { "WAIT_PRIVATE read-only page, mismatch", 0 | P, A_RO, 1, T_ZERO, 0, A_W0, 0, { 0 } },
  { "WAIT_PRIVATE read-only page, zero timeout", 0 | P, A_RO, 0, T_ZERO, 0, A_W0, 0, { 0 } },
  { "WAIT tv_nsec -1", 0 | P, A_W0, 0, T_NEGNS, 0, A_W0, 0, { 0 } },
  { "WAIT tv_nsec 1e9", 0 | P, A_W0, 0, T_BIGNS, 0, A_W0, 0, { 0 } },
  { "WAIT tv_sec -1", 0 | P, A_W0, 0, T_NEGS, 0, A_W0, 0, { 0 } },
  { "WAIT bad timeout before mismatch", 0 | P, A_W0, 1, T_NEGNS, 0, A_W0, 0, { 0 } },
  { "WAIT bad timeout before NULL", 0, A_NULL, 0, T_BIGNS, 0, A_W0, 0, { 0 } },
  { "WAIT|CLOCK_REALTIME", 0 | RT, A_W0, 0, T_ZERO, 0, A_W0, 0, { 0 } },
  { "WAIT_PRIVATE|CLOCK_REALTIME bad timeout", 0 | P | RT, A_W0, 0, T_NEGNS, 0, A_W0, 0, { 0 } },
  { "WAIT_PRIVATE|CLOCK_REALTIME no timeout, mismatch", 0 | P | RT, A_W0, 1, T_NULL, 0, A_W0, 0, { 0 } },
  /* FUTEX_WAIT_BITSET */
  { "WAIT_BITSET value mismatch", 9 | P, A_W0, 0, T_NULL, 0, A_W0, ~0u, { 1 } },
  { "WAIT_BITSET past deadline", 9 | P, A_W0, 0, T_PAST, 0, A_W0, ~0u, { 0 } },
  { "WAIT_BITSET zero deadline", 9 | P, A_W0, 0, T_ZERO, 0, A_W0, 1, { 0 } },
  { "WAIT_BITSET|CLOCK_REALTIME past deadline", 9 | P | RT, A_W0, 0, T_PAST, 0, A_W0, ~0u, { 0 } },
  { "shared WAIT_BITSET|CLOCK_REALTIME past deadline", 9 | RT, A_W0, 0, T_PAST, 0, A_W0, 2, { 0 } },
  { "WAIT_BITSET mismatch past deadline", 9 | P, A_W0, 3, T_PAST, 0, A_W0, ~0u, { 0 } },
  { "WAIT_BITSET zero bitset", 9 | P, A_W0, 0, T_PAST, 0, A_W0, 0, { 0 } },
  { "WAIT_BITSET zero bitset and mismatch", 9 | P, A_W0, 1, T_NULL, 0, A_W0, 0, { 0 } },
  { "WAIT_BITSET zero bitset and bad timeout", 9 | P, A_W0, 0, T_NEGS, 0, A_W0, 0, { 0 } },
  { "WAIT_BITSET tv_nsec 1e9", 9 | P, A_W0, 0, T_BIGNS, 0, A_W0, ~0u, { 0 } },
  { "WAIT_BITSET NULL", 9 | P, A_NULL, 0, T_PAST, 0, A_W0, ~0u, { 0 } },
  { "WAIT_BITSET misaligned", 9 | P, A_MIS, 0, T_PAST, 0, A_W0, ~0u, { 0 } },
  /* FUTEX_WAKE, FUTEX_WAKE_BITSET */
  { "WAKE_PRIVATE nobody", 1 | P, A_W0, 1, T_NULL, 0, A_W0, 0, { 0 } },
  { "WAKE shared nobody", 1, A_W0, 1, T_NULL, 0, A_W0, 0, { 0 } },
  { "WAKE_PRIVATE nr 0", 1 | P, A_W0, 0, T_NULL, 0, A_W0, 0, { 0 } },
  { "WAKE_PRIVATE nr -1", 1 | P, A_W0, (uint32_t)-1, T_NULL, 0, A_W0, 0, { 0 } },
  { "WAKE_PRIVATE NULL", 1 | P, A_NULL, 1, T_NULL, 0, A_W0, 0, { 0 } },
  { "WAKE shared NULL", 1, A_NULL, 1, T_NULL, 0, A_W0, 0, { 0 } },
  { "WAKE_PRIVATE unmapped page", 1 | P, A_UNMAP, 1, T_NULL, 0, A_W0, 0, { 0 } },
  { "WAKE shared unmapped page", 1, A_UNMAP, 1, T_NULL, 0, A_W0, 0, { 0 } },
  { "WAKE shared read-only page", 1, A_RO, 1, T_NULL, 0, A_W0, 0, { 0 } },
  { "WAKE_PRIVATE misaligned", 1 | P, A_MIS, 1, T_NULL, 0, A_W0, 0, { 0 } },
  { "WAKE_PRIVATE at the top of user space", 1 | P, A_TOP, 1, T_NULL, 0, A_W0, 0, { 0 } },
  { "WAKE_PRIVATE past the top of user space", 1 | P, A_PASTTOP, 1, T_NULL, 0, A_W0, 0, { 0 } },
  { "WAKE shared at the top of user space", 1, A_TOP, 1, T_NULL, 0, A_W0, 0, { 0 } },
  { "WAIT_PRIVATE at the top of user space", 0 | P, A_TOP, 0, T_ZERO, 0, A_W0, 0, { 0 } },
  { "REQUEUE_PRIVATE onto the top of user space", 3 | P, A_W0, 1, T_VAL2, 1, A_TOP, 0, { 0 } },
  { "REQUEUE_PRIVATE onto past the top", 3 | P, A_W0, 1, T_VAL2, 1, A_PASTTOP, 0, { 0 } },
  { "WAKE_PRIVATE|CLOCK_REALTIME", 1 | P | RT, A_W0, 1, T_NULL, 0, A_W0, 0, { 0 } },
  { "WAKE_BITSET zero bitset", 10 | P, A_W0, 1, T_NULL, 0, A_W0, 0, { 0 } },
  { "WAKE_BITSET nobody", 10 | P, A_W0, 1, T_NULL, 0, A_W0, 1, { 0 } },
  { "WAKE_BITSET|CLOCK_REALTIME", 10 | P | RT, A_W0, 1, T_NULL, 0, A_W0, ~0u, { 0 } },
  /* FUTEX_REQUEUE, FUTEX_CMP_REQUEUE */
  { "REQUEUE_PRIVATE nobody", 3 | P, A_W0, 1, T_VAL2, 1, A_W1, 0, { 0 } },
  { "REQUEUE shared nobody", 3, A_W0, 1, T_VAL2, 1, A_W1, 0, { 0 } },
  { "REQUEUE nr_wake -1", 3 | P, A_W0, (uint32_t)-1, T_VAL2, 1, A_W1, 0, { 0 } },
  { "REQUEUE nr_requeue -1", 3 | P, A_W0, 1, T_VAL2, -1, A_W1, 0, { 0 } },
  { "REQUEUE misaligned uaddr2", 3 | P, A_W0, 1, T_VAL2, 1, A_MIS, 0, { 0 } },
  { "REQUEUE onto itself", 3 | P, A_W0, 1, T_VAL2, 1, A_W0, 0, { 0 } },
  { "REQUEUE|CLOCK_REALTIME", 3 | P | RT, A_W0, 1, T_VAL2, 1, A_W1, 0, { 0 } },
  { "CMP_REQUEUE value mismatch", 4 | P, A_W0, 1, T_VAL2, 1, A_W1, 4, { 5 } },
  { "shared CMP_REQUEUE value mismatch", 4, A_W0, 1, T_VAL2, 1, A_W1, 4, { 5 } },
  { "CMP_REQUEUE value match", 4 | P, A_W0, 1, T_VAL2, 1, A_W1, 5, { 5 } },
  { "CMP_REQUEUE NULL uaddr", 4 | P, A_NULL, 1, T_VAL2, 1, A_W1, 0, { 0 } },
  { "CMP_REQUEUE unmapped uaddr", 4 | P, A_UNMAP, 1, T_VAL2, 1, A_W1, 0, { 0 } },
  { "CMP_REQUEUE negative count before mismatch", 4 | P, A_W0, 1, T_VAL2, -1, A_W1, 4, { 5 } },
  { "CMP_REQUEUE misaligned uaddr2", 4 | P, A_W0, 1, T_VAL2, 1, A_MIS, 5, { 5 } },
  /* FUTEX_WAKE_OP on scratch word w1 */
  { "WAKE_OP SET", 5 | P, A_W0, 1, T_VAL2, 1, A_W1, OPE(0, 5, 0, 0x10), { 0, 0x10 } },
  { "WAKE_OP ADD", 5 | P, A_W0, 1, T_VAL2, 1, A_W1, OPE(1, 3, 1, 0), { 0, 0x10 } },
  { "WAKE_OP ADD negative oparg", 5 | P, A_W0, 1, T_VAL2, 1, A_W1, OPE(1, 0xfff, 2, 0), { 0, 0x10 } },
  { "WAKE_OP OR", 5 | P, A_W0, 1, T_VAL2, 1, A_W1, OPE(2, 3, 3, 0xfff), { 0, 0x10 } },
  { "WAKE_OP ANDN", 5 | P, A_W0, 1, T_VAL2, 1, A_W1, OPE(3, 0x10, 4, 0), { 0, 0x1f } },
  { "WAKE_OP XOR", 5 | P, A_W0, 1, T_VAL2, 1, A_W1, OPE(4, 0xff, 5, 0), { 0, 0x10 } },
  { "WAKE_OP OPARG_SHIFT SET 4", 5 | P, A_W0, 1, T_VAL2, 1, A_W1, OPE(8, 4, 0, 0), { 0, 0x10 } },
  { "WAKE_OP OPARG_SHIFT ADD 31", 5 | P, A_W0, 1, T_VAL2, 1, A_W1, OPE(9, 31, 0, 0), { 0, 0x10 } },
  { "WAKE_OP OPARG_SHIFT OR 33 (masked)", 5 | P, A_W0, 1, T_VAL2, 1, A_W1, OPE(10, 33, 0, 0), { 0, 0x10 } },
  { "WAKE_OP OPARG_SHIFT XOR -1 (masked)", 5 | P, A_W0, 1, T_VAL2, 1, A_W1, OPE(12, 0xfff, 0, 0), { 0, 0x10 } },
  { "WAKE_OP invalid op 5", 5 | P, A_W0, 1, T_VAL2, 1, A_W1, OPE(5, 1, 0, 0), { 0, 0x10 } },
  { "WAKE_OP invalid op 15", 5 | P, A_W0, 1, T_VAL2, 1, A_W1, OPE(15, 1, 0, 0), { 0, 0x10 } },
  { "WAKE_OP invalid cmp 6", 5 | P, A_W0, 1, T_VAL2, 1, A_W1, OPE(0, 9, 6, 0), { 0, 0x10 } },
  { "WAKE_OP invalid cmp 15", 5 | P, A_W0, 1, T_VAL2, 1, A_W1, OPE(1, 1, 15, 0), { 0, 0x10 } },
  { "WAKE_OP counts 0 and -1", 5 | P, A_W0, 0, T_VAL2, -1, A_W1, OPE(1, 1, 0, 0), { 0, 0x10 } },
  { "shared WAKE_OP", 5, A_W0, 1, T_VAL2, 1, A_W1, OPE(4, 0x3, 0, 0), { 0, 0x10 } },
  { "WAKE_OP onto uaddr itself", 5 | P, A_W0, 1, T_VAL2, 1, A_W0, OPE(1, 2, 0, 0), { 0x10 } },
  { "WAKE_OP NULL uaddr2", 5 | P, A_W0, 1, T_VAL2, 1, A_NULL, OPE(0, 1, 0, 0), { 0 } },
  { "WAKE_OP read-only uaddr2", 5 | P, A_W0, 1, T_VAL2, 1, A_RO, OPE(0, 1, 0, 0), { 0 } },
  { "WAKE_OP misaligned uaddr2", 5 | P, A_W0, 1, T_VAL2, 1, A_MIS, OPE(0, 1, 0, 0), { 0 } },
  { "WAKE_OP private NULL uaddr", 5 | P, A_NULL, 1, T_VAL2, 1, A_W1, OPE(0, 1, 0, 0), { 0, 0x10 } },
  { "WAKE_OP shared NULL uaddr", 5, A_NULL, 1, T_VAL2, 1, A_W1, OPE(0, 1, 0, 0), { 0, 0x10 } },
  { "WAKE_OP|CLOCK_REALTIME", 5 | P | RT, A_W0, 1, T_VAL2, 1, A_W1, OPE(0, 1, 0, 0), { 0, 0x10 } },
  /* unknown and removed ops */
  { "FUTEX_FD", 2, A_W0, 0, T_NULL, 0, A_W0, 0, { 0 } },
  { "op 14", 14 | P, A_W0, 0, T_NULL, 0, A_W0, 0, { 0 } },
  { "op 15", 15, A_W0, 0, T_NULL, 0, A_W0, 0, { 0 } },
  { "op -1", -1, A_W0, 0, T_NULL, 0, A_W0, 0, { 0 } },
  { "op 1|0x200", 1 | 0x200, A_W0, 1, T_NULL, 0, A_W0, 0, { 0 } },
  { "op 0|0x400", 0 | 0x400, A_W0, 1, T_NULL, 0, A_W0, 0, { 0 } },
};
#define NCASES (sizeof cases / sizeof cases[0])

static uint32_t *ro_page, *unmapped;

static uint32_t *
resolve(enum addr a, uint32_t *buf)
{
  switch (a) {
  case A_W0: return &buf[0];
  case A_W1: return &buf[1];
  case A_W2: return &buf[2];
  case A_NULL: return NULL;
  case A_MIS: return (uint32_t *)(void *)((char *)&buf[2] + 1);
  case A_UNMAP: return unmapped;
  case A_RO: return ro_page;
  /* The edge of user space: the last address the kernel's range check
   * passes on x86_64 (TASK_SIZE_MAX), and the next word; in a 32-bit
   * process, the top page's first and last words. */
#if defined(__x86_64__) && !defined(__ILP32__)
  case A_TOP: return (uint32_t *)(((uintptr_t)1 << 47) - 4096);
  case A_PASTTOP: return (uint32_t *)(((uintptr_t)1 << 47) - 4092);
#else
  case A_TOP: return (uint32_t *)(UINTPTR_MAX - 4095);
  case A_PASTTOP: return (uint32_t *)(UINTPTR_MAX - 3);
#endif
  }
  return NULL;
}

static long
run(const struct kcase *c, int kernel, uint32_t *buf, int *err)
{
  static const struct timespec ts[] = {
    { 0, 0 }, { 0, 0 }, { 1, 0 }, { 0, -1 }, { 0, 1000000000L }, { -1, 0 },
  };
  const struct timespec *tp;
  uint32_t *u1, *u2;
  long r;

  memcpy(buf, c->init, sizeof c->init);
  u1 = resolve(c->a1, buf);
  u2 = resolve(c->a2, buf);
  if (c->t == T_NULL)
    tp = NULL;
  else if (c->t == T_VAL2)
    tp = (const struct timespec *)(uintptr_t)(unsigned)c->val2;
  else
    tp = &ts[c->t];
  errno = 0;
  if (kernel)
    r = syscall(SYS_futex, u1, c->op, c->val, tp, u2, c->val3);
  else
    r = pfutex(u1, c->op, c->val, tp, u2, c->val3);
  *err = errno;
  return r;
}

int
main(void)
{
  static uint32_t kbuf[4] __attribute__((aligned(16)));
  static uint32_t pbuf[4] __attribute__((aligned(16)));
  long pg = sysconf(_SC_PAGESIZE);
  unsigned i;
  uint32_t wrong_op;
  void *p;

  plan(NCASES);
  pft_watchdog(60);

  p = mmap(NULL, (size_t)pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    sysbail("mmap");
  ro_page = p;
  p = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    sysbail("mmap");
  if (munmap(p, (size_t)pg) != 0)
    sysbail("munmap");
  unmapped = p;

  wrong_op = pft_kernel_wake_op_wrong();
  for (i = 0; i < NCASES; i++) {
    const struct kcase *c = &cases[i];
    int kerr, perr, same;
    long kr, pr;

    /* Under qemu-user the reference is not this CPU's kernel: an address
     * past the guest's user space is translated and range-checked by the
     * host's kernel, and WAKE_OP is applied in the host's byte order. */
    if (pft_emulator() && (c->a1 == A_TOP || c->a1 == A_PASTTOP || c->a2 == A_TOP
                           || c->a2 == A_PASTTOP)) {
      skip("%s: under %s the reference answer is the host kernel's range check", c->name,
           pft_emulator());
      continue;
    }
    if (wrong_op && (c->op & 0x7f) == 5) {
      skip("%s: the kernel's FUTEX_WAKE_OP is wrong here (1 + 1 stored 0x%08x%s%s)", c->name,
           (unsigned)wrong_op, pft_emulator() ? ": under " : "",
           pft_emulator() ? pft_emulator() : "");
      continue;
    }

    kr = run(c, 1, kbuf, &kerr);
    pr = run(c, 0, pbuf, &perr);

    same = kr == pr && (kr != -1 || kerr == perr) && memcmp(kbuf, pbuf, sizeof kbuf) == 0;
    if (!ok(same, "%s: kernel %ld%s%s", c->name, kr, kr == -1 ? "/" : "",
            kr == -1 ? strerror(kerr) : "")) {
      diag("    op %d: kernel %ld errno %d mem %08x %08x %08x %08x", c->op, kr, kerr,
           kbuf[0], kbuf[1], kbuf[2], kbuf[3]);
      diag("    op %d: pfutex %ld errno %d mem %08x %08x %08x %08x", c->op, pr, perr,
           pbuf[0], pbuf[1], pbuf[2], pbuf[3]);
    }
  }
  return 0;
}

#else

int
main(void)
{
  skip_all("raw futex(2) comparison needs Linux");
}

#endif
