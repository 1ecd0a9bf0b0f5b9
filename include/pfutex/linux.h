/* pfutex/linux.h - drop-in names for code written against Linux futex(2).
 *
 * Defines the FUTEX_* constants (with the same spelling as <linux/futex.h>,
 * so both headers may be included, in either order) and a futex() wrapper
 * that calls pfutex():  syscall(SYS_futex, a, b, ...) becomes futex(a, b, ...).
 */
#ifndef PFUTEX_LINUX_H
#define PFUTEX_LINUX_H

#include <pfutex.h>

#ifndef _LINUX_FUTEX_H
#define FUTEX_WAIT		0
#define FUTEX_WAKE		1
#define FUTEX_FD		2
#define FUTEX_REQUEUE		3
#define FUTEX_CMP_REQUEUE	4
#define FUTEX_WAKE_OP		5
#define FUTEX_LOCK_PI		6
#define FUTEX_UNLOCK_PI		7
#define FUTEX_TRYLOCK_PI	8
#define FUTEX_WAIT_BITSET	9
#define FUTEX_WAKE_BITSET	10
#define FUTEX_WAIT_REQUEUE_PI	11
#define FUTEX_CMP_REQUEUE_PI	12
#define FUTEX_LOCK_PI2		13

#define FUTEX_PRIVATE_FLAG	128
#define FUTEX_CLOCK_REALTIME	256
#define FUTEX_CMD_MASK		~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME)

#define FUTEX_WAIT_PRIVATE	(FUTEX_WAIT | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAKE_PRIVATE	(FUTEX_WAKE | FUTEX_PRIVATE_FLAG)
#define FUTEX_REQUEUE_PRIVATE	(FUTEX_REQUEUE | FUTEX_PRIVATE_FLAG)
#define FUTEX_CMP_REQUEUE_PRIVATE (FUTEX_CMP_REQUEUE | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAKE_OP_PRIVATE	(FUTEX_WAKE_OP | FUTEX_PRIVATE_FLAG)
#define FUTEX_LOCK_PI_PRIVATE	(FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG)
#define FUTEX_LOCK_PI2_PRIVATE	(FUTEX_LOCK_PI2 | FUTEX_PRIVATE_FLAG)
#define FUTEX_UNLOCK_PI_PRIVATE	(FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG)
#define FUTEX_TRYLOCK_PI_PRIVATE (FUTEX_TRYLOCK_PI | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAIT_BITSET_PRIVATE	(FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAKE_BITSET_PRIVATE	(FUTEX_WAKE_BITSET | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAIT_REQUEUE_PI_PRIVATE	(FUTEX_WAIT_REQUEUE_PI | \
					 FUTEX_PRIVATE_FLAG)
#define FUTEX_CMP_REQUEUE_PI_PRIVATE	(FUTEX_CMP_REQUEUE_PI | \
					 FUTEX_PRIVATE_FLAG)

#define FUTEX_WAITERS		0x80000000
#define FUTEX_OWNER_DIED	0x40000000
#define FUTEX_TID_MASK		0x3fffffff
#define FUTEX_BITSET_MATCH_ANY	0xffffffff

#define FUTEX_OP_SET		0
#define FUTEX_OP_ADD		1
#define FUTEX_OP_OR		2
#define FUTEX_OP_ANDN		3
#define FUTEX_OP_XOR		4
#define FUTEX_OP_OPARG_SHIFT	8
#define FUTEX_OP_CMP_EQ		0
#define FUTEX_OP_CMP_NE		1
#define FUTEX_OP_CMP_LT		2
#define FUTEX_OP_CMP_LE		3
#define FUTEX_OP_CMP_GT		4
#define FUTEX_OP_CMP_GE		5
#define FUTEX_OP(op, oparg, cmp, cmparg) \
  (((op & 0xf) << 28) | ((cmp & 0xf) << 24)		\
   | ((oparg & 0xfff) << 12) | (cmparg & 0xfff))


/* The robust list a thread registers (pfutex_set_robust_list): entries
 * are linked through a struct robust_list member of each lock, the lock's
 * word at futex_offset from that member. */
struct robust_list {
  struct robust_list *next;
};
struct robust_list_head {
  struct robust_list list;
  long futex_offset;
  struct robust_list *list_op_pending;
};
#define ROBUST_LIST_LIMIT	2048
#endif /* !_LINUX_FUTEX_H */

/* futex2's flags (older <linux/futex.h> lack some). */
#ifndef FUTEX2_SIZE_U32
# define FUTEX2_SIZE_U8		0x00
# define FUTEX2_SIZE_U16	0x01
# define FUTEX2_SIZE_U32	0x02
# define FUTEX2_SIZE_U64	0x03
# define FUTEX2_NUMA		0x04
#endif
#ifndef FUTEX2_PRIVATE
# define FUTEX2_PRIVATE		128
#endif
#ifndef FUTEX_WAITV_MAX
# define FUTEX_WAITV_MAX	128
#endif

#ifndef PFUTEX_NO_FUTEX_WRAPPER
/* futex(): the multiplexer under its Linux name (define PFUTEX_NO_FUTEX_WRAPPER
 * to leave it out where a system header already declares one). */
static inline long
futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *timeout,
      uint32_t *uaddr2, uint32_t val3)
{
  return pfutex(uaddr, op, val, timeout, uaddr2, val3);
}
#endif

#endif /* PFUTEX_LINUX_H */
