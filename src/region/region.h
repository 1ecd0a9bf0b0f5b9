/* region.h - the layout of a shared region's memory (invariant 7): what
 * processes share.  What one process keeps of it: internal.h.
 *
 * Everything here is shared between processes that may be 32-bit or
 * 64-bit, and none of it is trusted: offsets and fixed-width integers only,
 * never a pointer; every 64-bit field at an offset that is a multiple of 8
 * and every struct a multiple of 8 long, so i386 (4-byte alignment of
 * uint64_t in structs) and x86_64 agree (checked at compile time below, in
 * every build, the -m32 one included).  The geometry is read and checked
 * once, when a process attaches, and kept in its attachment (internal.h): a
 * later scribble on the header cannot move the table under it.
 *
 *   offset 0          struct pf_rgn_hdr
 *   procs_off         nprocs x struct pf_rgn_proc     (64-byte aligned)
 *   buckets_off       nbuckets x struct pf_bucket     (64-byte aligned)
 *   slots_off         nslots x struct pf_node         (64-byte aligned)
 *   user_off          the user area (page aligned; none for an attach table)
 */
#ifndef PF_REGION_H
#define PF_REGION_H

#include "emu.h"

#define PF_RGN_MAGIC   0x47524650u      /* "PFRG" in a little-endian dump */
#define PF_RGN_VERSION 2u
#define PF_RGN_ENDIAN  0x01020304u      /* as the creator stored it */

enum { PF_RGN_NAMED = 1, PF_RGN_ANON = 2, PF_RGN_ATTACH = 3 };
/* Backend families: processes of one family wake each other (the native
 * variants all use the kernel; each emulated port parks differently). */
enum { PF_RGN_BE_LINUX = 1, PF_RGN_BE_EMU = 0x10000 /* + a hash of the port's name */ };

struct pf_rgn_hdr {
  uint32_t magic;          /* PF_RGN_MAGIC once ready: written last (release) */
  uint32_t version;        /* PF_RGN_VERSION */
  uint32_t endian;         /* PF_RGN_ENDIAN */
  uint32_t hdr_size;       /* sizeof(struct pf_rgn_hdr) */
  uint32_t node_size;      /* sizeof(struct pf_node) */
  uint32_t bucket_size;    /* sizeof(struct pf_bucket) */
  uint32_t proc_size;      /* sizeof(struct pf_rgn_proc) */
  uint32_t init_pid;       /* the process initialising it (before magic) */
  uint32_t nbuckets;       /* a power of two */
  uint32_t nslots;
  uint32_t nprocs;
  uint32_t kind;           /* PF_RGN_* of its creator */
  uint64_t total;          /* bytes of the object */
  uint64_t procs_off;
  uint64_t buckets_off;
  uint64_t slots_off;
  uint64_t user_off;
  uint64_t user_size;
  uint64_t order;          /* random: the lock order between two tables */
  uint32_t seq;            /* arrival numbers for the queues (rebuild) */
  uint32_t hint;           /* where a slot search starts */
  uint32_t backend;        /* the creator's backend family (PF_RGN_BE_*): every
                              process must use the same (EPROTO otherwise) */
  uint32_t live;           /* how the OS says who is alive (PF_LIVE_*, src/os.h):
                              every process must ask the same way (EPROTO) */
  uint32_t robust;         /* robust list heads registered (robust.c): while
                              nonzero, waiters look for dead processes' lists
                              every PF_RGN_ROBUST_SLICE_NS (a scribble costs
                              that look, or delays it, nothing else) */
  uint32_t reserved;
};

/* A process attached to the region.  The OS vouches for its owner being
 * alive (src/os.h: a record lock on byte e of the object; Windows: pid and
 * creation time).  pid: 0 free, else the owner's (Windows: PF_RGN_CLAIMING
 * | pid while the entry changes hands).  gen: bumped by each new owner, so
 * lock words and slots of an earlier owner never pass for the new one's;
 * when it wraps, the new owner first clears every word an earlier owner
 * of the entry left (slot.c, pf_att_sweep_entry), so no old lock id can
 * alias. */
#define PF_RGN_CLAIMING 0x80000000u
#define PF_RGN_HELD 10
struct pf_rgn_proc {
  uint32_t pid;
  uint32_t gen;
  uint32_t locking;        /* bucket locks its threads hold or are taking */
  uint32_t nonce;          /* the owner's random number (proc.c): with pid, how a
                              requeue between two tables finds one process's
                              entries in both (0: none, an older pfutex) */
  uint32_t start_lo, start_hi;   /* "start": the owner's start time */
  uint32_t held[PF_RGN_HELD];    /* the buckets its threads hold or are taking
                                    (index + 1; 0: a free place), each written
                                    after `locking` is raised and cleared before
                                    it is lowered: a lock word naming a live
                                    process that lists neither the bucket nor
                                    more locks than it lists is a scribble
                                    (lock.c) */
};

/* A robust list head registered in the region (robust.c): a slot in state
 * PF_W_ROBUST, on no queue, owned by the registering process, whose
 * fields say (a process killed at any instruction leaves either a free
 * slot or a whole registration: the state is stored last):
 *   key_lo, key_hi  the address the owner's keys count from (key_base)
 *   seq, waker      the head's key, low and high halves
 *   bitset          the owner's pointer size (4 or 8): its list's layout
 *   pi              the thread's id */
#define PF_RGN_ROBUST_SLICE_NS 100000000L

/* The liveness mechanisms, the header's `live` (src/os.h, live.c). */
enum { PF_LIVE_LOCK = 1, PF_LIVE_START = 2, PF_LIVE_LOCKFILE = 3 };

/* The limits a header may state: procs fit the 16 bits of a lock id. */
#define PF_RGN_MAX_PROCS   65535u
#define PF_RGN_MAX_SLOTS   1048576u
#define PF_RGN_MAX_BUCKETS 65536u

/* Compile-time layout checks: the same numbers in every ABI. */
#define PF_RGN_ASSERT(name, cond) typedef char pf_rgn_assert_##name[(cond) ? 1 : -1]
PF_RGN_ASSERT(hdr_size, sizeof(struct pf_rgn_hdr) == 128);
PF_RGN_ASSERT(hdr_total, offsetof(struct pf_rgn_hdr, total) == 48);
PF_RGN_ASSERT(hdr_order, offsetof(struct pf_rgn_hdr, order) == 96);
PF_RGN_ASSERT(hdr_seq, offsetof(struct pf_rgn_hdr, seq) == 104);
PF_RGN_ASSERT(hdr_live, offsetof(struct pf_rgn_hdr, live) == 116);
PF_RGN_ASSERT(hdr_robust, offsetof(struct pf_rgn_hdr, robust) == 120);
PF_RGN_ASSERT(proc_size, sizeof(struct pf_rgn_proc) == 64);
PF_RGN_ASSERT(node_size, sizeof(struct pf_node) == 80);
PF_RGN_ASSERT(node_state, offsetof(struct pf_node, state) == 40);
PF_RGN_ASSERT(node_park, offsetof(struct pf_node, park) == 68);
PF_RGN_ASSERT(bucket_size, sizeof(struct pf_bucket) == 64);

#endif
