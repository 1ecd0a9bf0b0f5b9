/* pfutex.pml - a Promela model of the emulated futex engine (private table).
 *
 * Checked exhaustively by Spin (model/check.sh, `make check-model`); see
 * model/README for the configurations, the properties and what is not
 * modelled.  Every step names the code it stands for (function, fragment).
 *
 * Memory model: sequentially consistent (every AO_*_full / acquire /
 * release primitive is an SC access), except the waker's store to its
 * futex word under -DBUG_NO_B, which goes through a one-entry store buffer
 * (TSO) that only a full barrier or a locked operation drains.
 *
 * Granularity: each access to a variable that another process reads or
 * writes without holding the same bucket lock (waiters, incoming, state,
 * bucket, the park word, the futex words) is a step of its own; accesses
 * to what only the lock holder touches (queue links, linked, counted, key,
 * wake_next, in_next after the take) are folded into the neighbouring step.
 *
 * Configurations (-DCFG_...): WAKE, REQ, REQ2, REQWAKE, WAKEOP, HANDLER
 * (signal handlers, (G) and (F)), REGION (a region's slots, owner death,
 * takeover and rebuild, slices, (R); KILLS=n deaths, default 1), FREE (two
 * freers of one dead slot and a claimer, (R)), WAITV, WAITVREQ, WAITVOP
 * (a futex_waitv of two private words vs wakes, a requeue, a wake_op:
 * src/waitv.c), WAITV2, WAITV2B (its words in two shared tables, the
 * second table's parker polled after slices); see the bottom.  Bug flags
 * (-DBUG_...): LOST_REQ_WAKE, NO_C, NO_C_FRONT, NO_B, TOUCH, DOUBLE_DRAIN,
 * WAKE_DETACHED, DETACH_NOLOCK, COUNT_DEAD, NO_TAKEOVER, REBUILD_DEAD,
 * FREE_ON_STACK (= WALK_ON_STACK + REBUILD_ON_STACK), FREE_ORDER,
 * VX_NO_CAS, VX_ARM_LATE, VX_NO_COLLECT, VX_COUNT_RUNG, VX_PARKER_FIRST,
 * VX2_NO_POLL, VX2_NO_DISARM2 (see README). */

#ifdef CFG_FREE
#define CFG_REGION        /* FREE uses the region's slots, oracle and killer */
#endif
#if defined(CFG_WAITV2) || defined(CFG_WAITV2B)
#define CFG_VX2           /* a futex_waitv over two shared tables (src/waitv.c): B's
                             member names a parker of its own, which is polled */
#endif
#if defined(CFG_WAITV) || defined(CFG_WAITVREQ) || defined(CFG_WAITVOP) || defined(CFG_VX2)
#define CFG_VX            /* a futex_waitv (src/waitv.c) in the private table */
#endif

/* ---- sizes ---------------------------------------------------------------- */
#define NB 2              /* buckets */
#define NW 2              /* futex words: A = 0, B = 1 */
#if !defined(NN) && defined(CFG_HANDLER)
#define NN 3              /* the thread's two nodes (levels 0, 1) and another waiter's */
#endif
#if !defined(NN) && defined(CFG_VX2)
#define NN 4              /* the waitv's parker (1), its two members (2, 3), the
                             second table's parker (4) */
#endif
#if !defined(NN) && defined(CFG_VX)
#define NN 3              /* the waitv's parker (1) and its two members (2, 3) */
#endif
#ifndef NN
#define NN 2              /* nodes (one per waiter; node 0 is "none") */
#endif
#define A 0
#define B 1
#ifdef SAMEBUCKET
#define BKT(w) 0          /* both words hash to bucket 0 */
#else
#define BKT(w) (w)
#endif

/* emu.h: enum { PF_W_IDLE = 0, PF_W_QUEUED, PF_W_WAKING, PF_W_DETACHED, PF_W_GONE } */
#define IDLE 0
#define QUEUED 1
#define WAKING 2
#define DETACHED 3
#define GONE 4

#define R_OK 0
#define R_EAGAIN 1
#define R_ETIMEDOUT 2
#define R_EINTR 3
#define R_NONE 9

/* ---- shared state ---------------------------------------------------------- */
typedef node_t {
  byte key;        /* pf_node: key_lo/key_hi/key_space (the word)          */
  byte bucket;     /* pf_node: bucket                                       */
  byte next;       /* pf_node: next, prev (queue links, 0 = none)           */
  byte prev;
  byte in_next;    /* pf_node: in_next (incoming stack)                     */
  byte wake_next;  /* pf_node: wake_next (waker's list)                     */
  bit linked;      /* pf_node: linked                                       */
  bit counted;     /* pf_node: counted                                      */
  byte state;      /* pf_node: state                                        */
  byte bitset;     /* pf_node: bitset                                       */
  bit tok;         /* pf_park: word (0 armed, 1 token given)                */
  /* ghosts (not in the code) */
  bit live;        /* the owner's wait is in progress                       */
  byte gen;        /* which wait of the owner                               */
  byte onq;        /* the queue holding it: bucket + 1, 0 none              */
  byte cby;        /* the waker (pid) that set WAKING in this wait, 0 none  */
  bit det;         /* its thread's handler detached this wait (G)            */
  /* regions (R) only: the node is a slot of the region's table */
  byte owner;      /* pf_node: owner (the owning process's lock id: pid + 1; 0 free) */
  bit pushed;      /* pf_node: pushed (since claimed: the rebuild's "on the queue") */
  byte seq;        /* pf_node: seq (arrival number, the rebuild's order;
                      a waitv member's entry index, src/waitv.c)            */
#ifdef CFG_VX
  /* futex_waitv (src/waitv.c): a member's pi is PF_PI_VX and its record
   * (lent by the pool) names the group's parker: rec->vx_lead */
  byte lead;       /* pf_thread: vx_lead of the member's record, 0: not a member */
#endif
};
node_t nd[NN + 1];

byte lock[NB];       /* pf_bucket: lock (0 free, else holder pid + 1) */
byte incoming[NB];   /* pf_bucket: incoming                           */
byte waiters[NB];    /* pf_bucket: waiters                            */
byte head[NB];       /* pf_bucket: head, tail                         */
byte tail[NB];
byte wordv[NW];      /* the futex words                               */

/* ghosts: totals for the final check */
byte g_woken;        /* nodes set WAKING by all wakers                 */
byte g_ret0;         /* waits that returned 0                          */
byte g_seen;         /* wakes the callers count: WAKE's return, requeue's
                        min(return, nr), WAKE_OP's return              */
byte g_done;         /* processes finished                             */
#ifdef CFG_VX
byte g_vxfound;      /* members a waitv's end found WAKING (pf_vx_woken_total) */
#endif

#ifdef CFG_HANDLER
/* (G): the waiter thread's signal handler.  hleft: handlers still to come
 * (one); hrun: the handler runs, the interrupted thread stands still. */
byte hleft = 1;
bit hrun;
#endif

/* ---- queue code (table.c), the bucket lock held ----------------------------- */

/* table.c: pf_queue_append_locked */
inline q_append(b, n) {
  assert(nd[n].onq == 0);
  nd[n].next = 0;                    /* n->next = 0 */
  nd[n].prev = tail[b];              /* n->prev = t ? b->tail : 0 */
  if
  :: tail[b] != 0 -> nd[tail[b]].next = n   /* t->next = ref */
  :: else -> head[b] = n                    /* b->head = ref */
  fi;
  tail[b] = n;                       /* b->tail = ref */
  nd[n].onq = b + 1
}

/* table.c: pf_queue_unlink_locked */
inline q_unlink(b, n) {
  assert(nd[n].onq == b + 1);        /* the node is on this bucket's queue */
  if
  :: nd[n].prev != 0 -> nd[nd[n].prev].next = nd[n].next   /* p->next = n->next */
  :: else -> head[b] = nd[n].next                          /* b->head = n->next */
  fi;
  if
  :: nd[n].next != 0 -> nd[nd[n].next].prev = nd[n].prev   /* x->prev = n->prev */
  :: else -> tail[b] = nd[n].prev                          /* b->tail = n->prev */
  fi;
  nd[n].next = 0; nd[n].prev = 0;    /* n->next = n->prev = 0 */
  nd[n].onq = 0
}

/* table.c: pf_bucket_drain_locked.  The take (CAS(&b->incoming, top, 0)) is
 * the only access others make without the lock; the reversal and the
 * appends are the lock holder's. */
inline drain(b) {
#ifdef CFG_REGION
  /* a region's lock holder may die between the take and the appends
   * (PF_CRASH("drain_taken")): the stack is then lost, the rebuild finds
   * its nodes by their pushed mark */
  atomic { top = incoming[b]; incoming[b] = 0 }  /* AO_int_compare_and_swap_full(&b->incoming, top, 0) */
#endif
  d_step {
#ifndef CFG_REGION
    top = incoming[b]; incoming[b] = 0;       /* AO_int_compare_and_swap_full(&b->incoming, top, 0) */
#endif
    rev = 0; s = top;
    do                                        /* for (s = top; s;) { next = n->in_next; n->in_next = rev; ... } */
    :: s != 0 -> assert(nd[s].live); nx = nd[s].in_next; nd[s].in_next = rev; rev = s; s = nx
    :: else -> break
    od;
    do                                        /* while (rev) { ... if (!n->linked) append; n->linked = 1 } */
    :: rev != 0 ->
       nx = nd[rev].in_next; nd[rev].in_next = 0;
       if
       :: !nd[rev].linked -> q_append(b, rev); nd[rev].linked = 1
       :: else
       fi;
       rev = nx
    :: else -> break
    od;
    top = 0; s = 0; nx = 0
  }
}

#ifndef CFG_REGION
/* table.c: pf_bucket_lock (private table): CAS(l, 0, 1), spinning */
inline block(b) {
  atomic { lock[b] == 0 -> lock[b] = _pid + 1 }
}
#else
/* region/lock.c: pf_region_bucket_lock (a region's; table.c's pf_bucket_lock
 * calls it through the table's ops): CAS(l, 0, me), spinning; a locker
 * that finds the holder's process dead takes the lock over, CAS(l, h, me),
 * and rebuilds the bucket from the slots; a live holder keeps its lock,
 * however long.  Death is the ghost alive[]: what the code asks the OS
 * (pf_region_lock_holder_dead -> pf_region_id_dead: the entry's record
 * lock, or its pid and start time) and the OS vouches for, exact (a death
 * the OS reports late is a process that stood still, then died).  The
 * "count 0: a scribble" and "our own process" rules (corruption) are not
 * modelled (README). */
inline block(b) {
  if
  :: atomic { lock[b] == 0 -> lock[b] = _pid + 1 }    /* h == 0 && CAS(l, 0, me): return 0 */
#ifndef BUG_NO_TAKEOVER
  :: atomic { lock[b] != 0 && !alive[lock[b] - 1] ->  /* pf_region_lock_holder_dead(tab, h) */
       lock[b] = _pid + 1 };                          /*   && CAS(l, h, me) */
     rebuild(b)                                       /* return pf_bucket_rebuild_locked(tab, i) */
#endif
  fi
}
#endif
/* table.c: pf_bucket_unlock: AO_int_store_release(&lock, 0) */
inline bunlock(b) {
  assert(lock[b] == _pid + 1); lock[b] = 0
}

/* table.c: pf_node_unlink_locked: unlink, linked = 0, and give back the count (A).
 * Two steps: the queue (lock) and the count (read by the wake fast path). */
inline node_unlink(b, n) {
  atomic {
    q_unlink(b, n);                           /* pf_queue_unlink_locked(tab, b, n) */
    nd[n].linked = 0;                         /* n->linked = 0 */
#ifdef CFG_REGION
  }                                           /* a region's holder may die here */
  atomic {
#endif
    if
    :: nd[n].counted ->
       nd[n].counted = 0;                     /* n->counted = 0 */
       assert(waiters[b] > 0);
       waiters[b]--                           /* AO_int_fetch_and_add_full(&b->waiters, -1) */
    :: else
    fi
  }
}

#ifdef CFG_REGION
/* ---- regions (R): slots, owners, death, the rebuild ---------------------------- */
#ifndef CFG_FREE
#define NPR 5            /* pids: init 0, the processes 1..3, the killer 4 */
#else
#define NPR 6            /* and 5: the process that died owning slot 1 (FREE) */
#endif
bit alive[NPR];      /* the oracle: the OS says exactly who is dead (README) */
bit pdone[NPR];      /* ghost: the process finished its calls */
#ifndef KILLS
#define KILLS 1      /* how many processes may die */
#endif
byte g_seq;          /* region header: seq (arrival numbers) */
byte g_wlive;        /* ghost: counts of slots whose owner lived when the waker looked */

/* region/slot.c: pf_slot_free(tab, n, owner), its middle: n->linked = n->pushed =
 * n->counted = 0; AO_int_store(&n->state, PF_W_IDLE).  Ghosts: the slot's
 * wait is over (its owner returned, or it was dead); a freed slot is on no
 * queue and on no incoming stack (a later drain would link a free slot);
 * the writer owns the slot, or a dead process does (never a live other
 * process: its wait would be clobbered; never nobody: a claimer may take
 * it at any moment). */
inline slot_reset(n) {
  assert(nd[n].owner == _pid + 1 || (nd[n].owner != 0 && !alive[nd[n].owner - 1]));
  assert(nd[n].onq == 0);
  rr = incoming[nd[n].bucket];
  do
  :: rr != 0 -> assert(rr != n); rr = nd[rr].in_next
  :: else -> break
  od;
  rr = 0;
  nd[n].linked = 0; nd[n].pushed = 0; nd[n].counted = 0;
  nd[n].state = IDLE;
  nd[n].live = 0
}

/* region/slot.c: pf_slot_free(tab, n, owner) as one step: the owner freeing its
 * own slot (owner == me: AO_int_load(&n->owner) != me: return; the fields;
 * CAS(&n->owner, me, 0)), and the rebuild's free of a dead slot (its walk
 * of the slots is one step; the owner transfer below is folded in). */
inline slot_free(n) {
  slot_reset(n);
  nd[n].owner = 0
}

/* region/slot.c: pf_slot_free(tab, n, o) of a dead process's slot (o != me), step
 * by step: CAS(&n->owner, o, me) (of two freers only one writes the slot,
 * and a slot freed and claimed meanwhile stays its new owner's), the
 * fields, PF_CRASH("slot_freeing"), CAS(&n->owner, me, 0) (a freer killed
 * in between leaves a slot owned by a dead id: freed again later).
 * BUG_FREE_ORDER: the code before 0185bf9: if (AO_int_load(&n->owner) !=
 * o) return; the fields; CAS(&n->owner, o, 0): two freers may both pass
 * the look, and the second writes the slot after the first freed it. */
inline slot_free_dead(n, o) {
#ifndef BUG_FREE_ORDER
  atomic {                                    /* AO_int_compare_and_swap_full(&n->owner, owner, me) */
    if :: nd[n].owner == o -> nd[n].owner = _pid + 1; fgot = 1 :: else -> fgot = 0 fi
  }
  if
  :: fgot ->
     atomic { slot_reset(n) }                 /* linked = pushed = counted = 0; state = PF_W_IDLE */
     atomic {                                 /* AO_int_compare_and_swap_full(&n->owner, me, 0) */
       if :: nd[n].owner == _pid + 1 -> nd[n].owner = 0 :: else fi
     }
  :: else                                     /* not ours to free: return */
  fi;
#else
  fgot = (nd[n].owner == o);                  /* old: if (AO_int_load(&n->owner) != owner) return */
  if
  :: fgot ->
     atomic { slot_reset(n) }                 /* linked = pushed = counted = 0; state = PF_W_IDLE */
     atomic {                                 /* old: AO_int_compare_and_swap_full(&n->owner, owner, 0) */
       if :: nd[n].owner == o -> nd[n].owner = 0 :: else fi
     }
  :: else
  fi;
#endif
  fgot = 0
}

/* region/slot.c: pf_node_on_stack_locked(tab, b, ref): is slot n on bucket b's
 * incoming stack (its lock held)?  A walk from the top; only pushes change
 * the stack meanwhile, at the top.  Sets ons. */
inline on_stack(b, n) {
  ons = 0; rr = incoming[b];
  do
  :: rr != 0 && rr != n -> rr = nd[rr].in_next
  :: rr != 0 && rr == n -> ons = 1; break
  :: else -> break
  od;
  rr = 0
}

/* region/lock.c: pf_bucket_rebuild_locked(tab, i), after a takeover: the queue,
 * the incoming stack and the count rebuilt from the slots.  Whatever step
 * the dead holder stopped at: slots QUEUED/DETACHED of this bucket with a
 * live owner are kept (counted = 1; linked in arrival order if pushed),
 * dead owners' slots are freed, and the count is max(cur - dead shares,
 * live slots).  Two steps: the stack emptied, then the walk of the slots
 * (the lock is held, others touch only incoming, the count and the
 * states; a push may land between the two steps; in the code the owners'
 * steps interleave with the walk too: the model takes its snapshot at
 * once).  A dead slot whose push landed
 * after the stack was emptied is kept like a live one (linked and
 * counted): freed, it would sit on the stack (the KILLS=2 finding, README);
 * BUG_FREE_ON_STACK and BUG_REBUILD_ON_STACK free it (the code before
 * d5ee46a). */
inline rebuild(b) {
  atomic {
    incoming[b] = 0                           /* (void)AO_int_fetch_and_add_full(&b->incoming, 0); */
  }                                           /*   AO_int_store(&b->incoming, 0) */
  d_step {
    head[b] = 0; tail[b] = 0;                 /* b->head = b->tail = 0 */
    rs = 1;                                   /* ghost: no node on the old queue any more */
    do
    :: rs <= NN -> if :: nd[rs].onq == b + 1 -> nd[rs].onq = 0 :: else fi; rs++
    :: else -> break
    od;
    rcnt = 0; rdead = 0; rs = 1;
    do                                        /* for (s = 0; s < tab->nslots; s++) */
    :: rs <= NN ->
       if
       :: nd[rs].owner != 0 && (nd[rs].state == QUEUED || nd[rs].state == DETACHED) && BKT(nd[rs].key) == b ->
          on_stack(b, rs);                    /* (the walk of the stack, for the test below) */
          if
#ifndef BUG_REBUILD_DEAD
          :: !alive[nd[rs].owner - 1] &&      /* !pf_node_owner_alive(tab, n) */
#if !defined(BUG_FREE_ON_STACK) && !defined(BUG_REBUILD_ON_STACK)
             !(nd[rs].pushed && incoming[b] != 0 && ons) ->  /* && !(n->pushed && AO_int_load(&b->incoming) */
                                              /*   && pf_node_on_stack_locked(tab, b, s + 1)) */
#else
             true ->                          /* old: a dead slot is freed, on the stack or not */
#endif
             rdead = rdead + nd[rs].counted;  /* dead += n->counted != 0 */
             slot_free(rs)                    /* linked = counted = 0; pf_slot_free(tab, n, o) */
#endif
          :: else ->                          /* live, or dead and on the stack: kept */
             nd[rs].bucket = b; nd[rs].counted = 1; rcnt++; nd[rs].linked = 0;
             if
             :: nd[rs].pushed ->              /* insert by arrival number, from the tail */
                rr = tail[b]; rat = 0;
                do
                :: rr != 0 -> if :: nd[rs].seq >= nd[rr].seq -> rat = rr; break :: else -> rr = nd[rr].prev fi
                :: else -> break
                od;
                nd[rs].in_next = 0;
                if
                :: rat == 0 ->                /* first */
                   nd[rs].prev = 0; nd[rs].next = head[b];
                   if :: head[b] != 0 -> nd[head[b]].prev = rs :: else -> tail[b] = rs fi;
                   head[b] = rs
                :: else ->
                   nd[rs].prev = rat; nd[rs].next = nd[rat].next;
                   if :: nd[rat].next != 0 -> nd[nd[rat].next].prev = rs :: else -> tail[b] = rs fi;
                   nd[rat].next = rs
                fi;
                nd[rs].linked = 1; nd[rs].onq = b + 1
             :: else
             fi
          fi
       :: else
       fi;
       rs++
    :: else -> break
    od;
    /* cur = waiters - dead (not below 0); waiters = max(cur, count) */
    if :: waiters[b] >= rdead -> rcur = waiters[b] - rdead :: else -> rcur = 0 fi;
    if :: rcur > rcnt -> waiters[b] = rcur :: else -> waiters[b] = rcnt fi;
    rs = 0; rcnt = 0; rdead = 0; rcur = 0; rr = 0; rat = 0; ons = 0
  }
}
#endif

/* ---- the waker's store buffer (BUG_NO_B only) --------------------------------- */
#ifdef BUG_NO_B
bit sb_full;         /* the waker's store buffer holds a word */
byte sb_word;        /* which word, and its value */
byte sb_val;
inline sb_flush() {
  if :: sb_full -> wordv[sb_word] = sb_val; sb_full = 0 :: else fi
}
#endif

/* the caller's store to the futex word, before it calls wake (wait.c: "K: *uaddr = new") */
inline word_store(w, v) {
#ifdef BUG_NO_B
  atomic { sb_flush(); sb_word = w; sb_val = v; sb_full = 1 }
#else
  wordv[w] = v
#endif
}

/* ---- waking (table.c: pf_queue_wake_locked, pf_wake_list) ----------------------- */

#ifdef CFG_VX
/* table.c: pf_node_wake_locked, the PF_PI_VX branch (src/waitv.c), for the
 * member just set WAKING whose record names the parker vl: the parker is
 * rung once, by whoever moves it from QUEUED first, under the member's
 * bucket lock (still held); the winner lists it for the unpark after the
 * unlock (pf_wake_list: the token, the last touch).  A loser only counted
 * its member (l->n++ above).  BUG_VX_NO_CAS: rung whatever its state (the
 * CAS's store kept): every waker of a member lists it.
 * BUG_VX_COUNT_RUNG: l->n++ only on the CAS's success (the member that
 * rang is counted, one found after it is not). */
inline vx_ring() {
  if
  :: vl != 0 ->
     atomic {
       if                                     /* if (!lead || !AO_int_compare_and_swap_full( */
#ifndef BUG_VX_NO_CAS
       :: nd[vl].state == QUEUED ->           /*   &lead->state, PF_W_QUEUED, PF_W_WAKING)) return */
          nd[vl].state = WAKING;
#else
       :: true ->                             /* BUG: no CAS: rung whatever its state */
          if :: nd[vl].state == QUEUED -> nd[vl].state = WAKING :: else fi;
#endif
#ifdef BUG_VX_COUNT_RUNG
          ln++;                               /* BUG: the member counted only here */
#endif
          lgen[vl] = nd[vl].gen;              /* ghost: the wait it rings */
          /* w = lead; r = lr; l->n-- (counted above: the parker is no waiter) */
          nd[vl].wake_next = 0;               /* w->wake_next = 0 */
          if
          :: lt != 0 -> nd[lt].wake_next = vl /* l->tail->wake_next = r */
          :: else -> lh = vl                  /* l->head = r */
          fi;
          lt = vl                             /* l->tail = w; l->n++ (with the l->n--: the same n) */
#ifndef BUG_VX_NO_CAS
       :: else                                /* rung or disarmed already: the member only counted */
#endif
       fi;
       vl = 0
     }
  :: else
  fi
}
#endif

/* table.c: pf_queue_wake_locked(tab, i, k, mask, nr, &l): walk the queue
 * from its head; the caller holds bucket b's lock and drained it once
 * (wait.c (I)).  BUG_DOUBLE_DRAIN: the code before 0cefd89, whose walk
 * drained the bucket itself, so requeue drained its source twice.
 * Adds to the caller's list (lh/lt/ln, and ghosts lgen[] per node). */
inline queue_wake(b, w, mask, nr) {
#ifdef BUG_DOUBLE_DRAIN
  drain(b);                                   /* old: pf_bucket_ready_locked(tab, i) in the walk */
#endif
  cnt = 0;
  r = head[b];                                /* for (r = b->head; r && n < nr; r = next) */
  do
  :: r != 0 && cnt < nr ->
     atomic {
       assert(nd[r].live && nd[r].onq == b + 1);
       nx = nd[r].next;                       /* next = w->next */
       if                                     /* state != QUEUED || !keyeq || !(bitset & mask): continue */
#ifndef BUG_WAKE_DETACHED
       :: nd[r].state != QUEUED || nd[r].key != w || (nd[r].bitset & mask) == 0 -> skip_it = 1
#else
       /* BUG: a waker that takes a DETACHED node (G) for a queued one */
       :: (nd[r].state != QUEUED && nd[r].state != DETACHED) || nd[r].key != w || (nd[r].bitset & mask) == 0 -> skip_it = 1
#endif
       :: else -> skip_it = 0
       fi;
#ifdef CFG_REGION
       seen_alive = alive[nd[r].owner - 1];   /* ghost: the owner's process lives as the waker looks */
#ifndef BUG_COUNT_DEAD
       dead_it = !seen_alive;                 /* tab->slots && ops->reap: !pf_node_owner_alive (oracle) */
#endif
       /* BUG_COUNT_DEAD: no owner check, a dead process's slot is counted */
       /* pf_slot_free_dead_locked: if (n->pushed && pf_node_on_stack_locked(tab, b, ref))
        * return 0 (folded: the owner is dead, nobody but a drain, which
        * needs this lock, takes it off the stack) */
       ons = 0;
#if !defined(BUG_FREE_ON_STACK) && !defined(BUG_WALK_ON_STACK)
       if :: dead_it && nd[r].pushed -> on_stack(b, r) :: else fi;
#endif
       fo = nd[r].owner                       /* AO_int_load(&w->owner), the freer's `owner` */
#endif
     }
     if
     :: skip_it -> r = nx
#ifdef CFG_REGION
     :: !skip_it && dead_it && ons ->         /* its push may still be on the stack: left as it is */
        r = nx                                /*   (linked, counted); the next drain takes it off the */
                                              /*   stack (linked: skipped), the next walk frees it */
     :: !skip_it && dead_it && !ons ->        /* its process died: the kernel would have dropped it */
        node_unlink(b, r);                    /* pf_slot_free_dead_locked: n->linked: pf_node_unlink_locked */
        slot_free_dead(r, fo);                /* pf_slot_free(tab, n, owner) */
        r = nx                                /* continue */
#endif
     :: else ->
        node_unlink(b, r);                    /* pf_node_unlink_locked(tab, b, w) */
        atomic {
#ifndef BUG_WAKE_DETACHED
          assert(nd[r].state == QUEUED);      /* QUEUED -> WAKING only: a DETACHED node is never counted */
#endif
          nd[r].state = WAKING;               /* AO_int_store(&w->state, PF_W_WAKING) */
          assert(nd[r].cby == 0);
          nd[r].cby = _pid; g_woken++;        /* ghost: counted by this waker */
#ifdef CFG_REGION
          if :: seen_alive -> g_wlive++ :: else fi;   /* ghost: its owner lived when the waker looked */
          seen_alive = 0;
#endif
#ifdef CFG_VX
          vl = nd[r].lead;                    /* (w->pi & PF_PI_KIND) == PF_PI_VX: lead = */
          if                                  /*   pf_thread_rec(r)->vx_lead (!vx_lead_shared) */
          :: vl != 0 ->                       /* a futex_waitv member: counted here; its parker below */
#ifndef BUG_VX_COUNT_RUNG
             ln++                             /* l->n++ */
#else
             skip                             /* BUG: l->n++ only for the member that rings */
#endif
          :: else ->
#endif
          lgen[r] = nd[r].gen;
          nd[r].wake_next = 0;                /* w->wake_next = 0 */
          if
          :: lt != 0 -> nd[lt].wake_next = r  /* l->tail->wake_next = r */
          :: else -> lh = r                   /* l->head = r */
          fi;
          lt = r; ln++;                       /* l->tail = w; l->n++ */
#ifdef CFG_VX
          fi;
#endif
          cnt++; r = nx                       /* n++ (pf_queue_wake_locked's count) */
        }
#ifdef CFG_VX
        vx_ring()                             /* a member's parker, under this lock */
#endif
     fi
  :: else -> break
  od;
#ifdef CFG_REGION
  /* ghost: a walk that woke fewer than nr left no live waiter it could
   * wake on the queue (one queued behind a dead one is reached) */
  atomic {
    if
    :: cnt < nr ->
       r = head[b];
       do
       :: r != 0 -> assert(!(nd[r].state == QUEUED && nd[r].key == w && alive[nd[r].owner - 1])); r = nd[r].next
       :: else -> break
       od
    :: else
    fi;
    dead_it = 0; ons = 0; fo = 0
  }
#endif
  r = 0; nx = 0
}

/* table.c: pf_wake_list: r = w->wake_next read before the token is given;
 * unpark is the last touch (wait.c (D)). */
inline wake_list() {
  r = lh;
  do
  :: r != 0 && ln > 0 ->
#ifndef BUG_TOUCH
     atomic { assert(nd[r].live && nd[r].gen == lgen[r]); nx = nd[r].wake_next }   /* r = w->wake_next */
     atomic { assert(nd[r].live && nd[r].gen == lgen[r]); nd[r].tok = 1 }          /* unpark: AO_int_store_release(&k->word, 1) */
#else
     /* BUG_TOUCH: the historical order, the token first, then the list link */
     atomic { assert(nd[r].live && nd[r].gen == lgen[r]); nd[r].tok = 1 }          /* unpark */
     atomic { assert(nd[r].live && nd[r].gen == lgen[r]); nx = nd[r].wake_next }   /* touch after the token */
#endif
     r = nx; ln--
  :: else -> break
  od;
  lh = 0; lt = 0; ln = 0; r = 0; nx = 0
}
#ifdef CFG_REGION
/* A region's wake list: the owner of a listed slot may have returned
 * already (a slice ended it, (R)): its slot is freed, and the token is a
 * surplus one for whoever claims it next (absorbed by the park's loop).
 * No slot is claimed twice in CFG_REGION, so the list is never redirected:
 * each listed slot holds the wait counted or nothing. */
#undef wake_list
inline rwake_list() {
  r = lh;
  do
  :: r != 0 && ln > 0 ->
     atomic { assert(nd[r].gen == lgen[r]); nx = nd[r].wake_next }   /* r = w->wake_next */
     atomic { assert(nd[r].gen == lgen[r]); nd[r].tok = 1 }          /* unpark(&w->park, 1) */
     r = nx; ln--
  :: else -> break
  od;
  lh = 0; lt = 0; ln = 0; r = 0; nx = 0
}
#define wake_list rwake_list
#endif

/* ---- the waiter (wait.c) ------------------------------------------------------- */

/* table.c: pf_waiter_dequeue(w, to, 0): lock the bucket the node names,
 * re-check the name (requeue may have moved it: follow it), drain, unlink,
 * QUEUED -> to.  took: 1 if it was still QUEUED. */
inline dequeue(n, to) {
  do
  :: idx = nd[n].bucket;                      /* idx = AO_int_load_acquire(&n->bucket) */
     block(idx);                              /* pf_bucket_lock(tab, idx) */
     if
#ifndef BUG_LOST_REQ_WAKE
     :: nd[n].bucket != idx ->                /* AO_int_load(&n->bucket) != idx: requeued meanwhile */
        bunlock(idx)                          /* pf_bucket_unlock; continue */
     :: else ->
#else
     :: true ->                               /* BUG: no re-check (E): a requeue may have moved n */
#endif
        drain(idx);                           /* pf_bucket_ready_locked(tab, idx) */
        if
        :: nd[n].linked -> node_unlink(idx, n)   /* if (n->linked) pf_node_unlink_locked */
        :: else
        fi;
        atomic {
          took = (nd[n].state == QUEUED);     /* queued = AO_int_load(&n->state) == PF_W_QUEUED */
          if :: took -> nd[n].state = to :: else fi   /* AO_int_store(&n->state, to) */
        }
        bunlock(idx);
        break
     fi
  od;
  idx = 0
}

#ifdef CFG_HANDLER
/* (G) thread.c: pf_self_enter(frame), called in a critical section by a
 * handler's pfutex call (wait.c: pf_waiter_claim's slow path; wake.c:
 * pf_self_enter_fast, after the fast paths): the interrupted wait of node
 * sn, its frame live below the handler, is taken off its queue and given
 * its token: if (w->tab && pf_waiter_dequeue(w, PF_W_DETACHED, 0))
 * pf_emu_port->unpark(&w->node->park, ...). */
inline self_enter(sn) {
#ifndef BUG_DETACH_NOLOCK
  dequeue(sn, DETACHED);
#else
  /* BUG: the detach as a lock-free CAS(&n->state, QUEUED, DETACHED), the
   * node left on its queue for its owner to remove */
  atomic { took = (nd[sn].state == QUEUED); if :: took -> nd[sn].state = DETACHED :: else fi };
#endif
  if
  :: took ->
     nd[sn].det = 1;                                   /* ghost: detached in this wait */
     assert(nd[sn].live); nd[sn].tok = 1               /* pf_emu_port->unpark(&w->node->park) */
  :: else                                              /* WAKING (woken wins) or GONE: not ours */
  fi;
  took = 0
}

/* A point of the interrupted thread at which its handler may run (outside
 * every critical section, (G)): the thread stands still until the handler
 * is done.  hp: this wait may be interrupted (the handler's own may not). */
inline hpoint(hp) {
  if
  :: hp && hleft > 0 -> hleft = 0; hrun = 1; hrun == 0   /* the handler runs (proctype handler) */
  :: true
  fi
}
#define HPOINT(hp) hpoint(hp);
#else
#define HPOINT(hp)
#endif

/* One wait (pf_emu_wait -> pf_emu_wait_queued -> pf_emu_wait_once) of node n
 * on word w expecting val, bitset mask; timed: the park may end with
 * ETIMEDOUT at any point.  hp: a handler may interrupt it (CFG_HANDLER);
 * sn: the node of a wait this one interrupts, which its claim detaches
 * (pf_waiter_claim's slow path: pf_self_enter), 0 none.  Sets ret. */
inline wait_once(n, w, val, mask, timed, hp, sn) {
  /* pf_emu_wait: if (pf_wait_mismatch(r->uaddr, r->val)) return -EAGAIN (fast path) */
  if
  :: wordv[w] != val -> ret = R_EAGAIN
  :: else ->
#ifdef CFG_HANDLER
  if
  :: sn != 0 -> self_enter(sn)                         /* pf_waiter_claim: depth > 0: slow path, pf_self_enter(frame) */
  :: else
  fi;
#endif
  atomic {
    /* pf_waiter_claim: t->depth = 1; prepare: AO_int_store(&k->word, 0) */
    nd[n].tok = 0;
    nd[n].live = 1; nd[n].gen++; nd[n].cby = 0; nd[n].det = 0;   /* ghosts */
    /* pf_emu_wait_once: setkey, bitset, AO_int_store(&n->bucket, idx), linked = counted = 0 */
    nd[n].key = w; nd[n].bitset = mask; nd[n].bucket = BKT(w);
    nd[n].linked = 0; nd[n].counted = 0; nd[n].in_next = 0;
    nd[n].state = QUEUED                               /* AO_int_store(&n->state, PF_W_QUEUED) */
  }
  HPOINT(hp)                                           /* (G) before (A): detached before its push */
  atomic {
    waiters[BKT(w)]++;                                 /* (A) AO_int_fetch_and_add_full(&b->waiters, 1) */
    nd[n].counted = 1                                  /* n->counted = 1 */
  }
  HPOINT(hp)                                           /* (G) counted, not pushed */
  atomic {                                             /* (H) pf_bucket_push: CAS(in, old, ref) */
    nd[n].in_next = incoming[BKT(w)]; incoming[BKT(w)] = n
  }
  HPOINT(hp)                                           /* (G) pushed, before the word's read */
  if
  :: wordv[w] != val ->                                /* pf_word_load(r->uaddr) != r->val */
     dequeue(n, GONE);                                 /* pf_waiter_leave(w) */
     if
     :: took -> ret = R_EAGAIN
     :: else ->
        nd[n].tok == 1;                                /* pf_waiter_collect(w) */
        if                                             /* st == PF_W_WAKING ? 0 : -EAGAIN */
        :: nd[n].state == WAKING -> ret = R_OK
        :: else -> ret = R_EAGAIN
        fi                                             /* (DETACHED: EAGAIN; the leave unlinked it) */
     fi;
     nd[n].state = IDLE                                /* AO_int_store(&n->state, PF_W_IDLE) */
  :: else ->
     HPOINT(hp)                                        /* (G) before the park */
     /* pf_waiter_sleep(w, dl, async) */
     do
     :: /* ret = pf_waiter_park(w, dl, async): fpark_park returns 0 once the
         * word is 1; a timed park may end with ETIMEDOUT whenever it has
         * not seen the token (its last check of the word, then the return). */
        if
        :: nd[n].tok == 1 -> ret = R_OK
        :: timed && nd[n].tok == 0 -> ret = R_ETIMEDOUT
#ifdef CFG_HANDLER
        :: hp && hleft > 0 ->                          /* (G) a handler runs in the park */
           hleft = 0; hrun = 1; hrun == 0;
           if                                          /* the port: -EINTR after a handler, */
           :: ret = R_EINTR                            /* or 0 if the token is there (the detach's) */
           :: nd[n].tok == 1 -> ret = R_OK
           fi
#endif
        fi;
        if
        :: ret != R_OK -> break                        /* if (ret != 0 || state != QUEUED) break */
        :: else
        fi;
        if
        :: nd[n].state != QUEUED -> break
        :: else
        fi;
        /* (R) a surplus token: take it back (CAS(&n->park.word, tok, 0)) and look again */
        nd[n].tok = 0;
        if
        :: nd[n].state != QUEUED -> break
        :: else
        fi
     od;
     if
     :: ret != R_OK ->
        dequeue(n, GONE);                              /* if (pf_waiter_leave(w)) */
        if
        :: took -> nd[n].state = IDLE; goto returned   /* AO_int_store(&n->state, PF_W_IDLE); return ret */
        :: else
        fi;
        nd[n].tok == 1                                 /* pf_waiter_collect(w): (D) the token is due */
     :: else
     fi;
     st = nd[n].state;                                 /* st = AO_int_load(&n->state) */
#ifdef CFG_HANDLER
     if
     :: st == DETACHED -> dequeue(n, GONE); took = 0   /* (H) detached before its push: pf_waiter_leave(w) */
     :: else
     fi;
#endif
     nd[n].state = IDLE;                               /* AO_int_store(&n->state, PF_W_IDLE) */
     if
     :: st == WAKING -> ret = R_OK                     /* return st == PF_W_WAKING ? 0 : -EINTR */
     :: else -> ret = R_EINTR
     fi;
returned:
     skip
  fi;
  /* pf_self_pop: AO_int_store(&w->node->state, PF_W_IDLE); t->depth = 0 */
  atomic {
    nd[n].state = IDLE;
    /* ghosts: the wait is over.  Woken wins (D) and no lost count:
     * counted by a waker <=> returns 0. */
    assert(nd[n].onq == 0 && nd[n].linked == 0);
    assert((nd[n].cby != 0) == (ret == R_OK));
    assert(!(nd[n].det && nd[n].cby != 0));            /* (G) a detached wait is counted by no waker */
    if :: ret == R_OK -> g_ret0++ :: else fi;
    nd[n].live = 0
  }
  fi
}

/* ---- the operations (wake.c, requeue.c) ------------------------------------------ */

/* wake.c: pf_emu_wake(r): the fast path (B), then pf_emu_wake_queued.
 * sn: the node of a wait this call's thread interrupted (a handler's
 * wake, (G)), detached on the slow path only, 0 none. */
inline op_wake(w, mask, nr, sn) {
  if
  :: nr == 0 -> wret = 0                               /* if (r->nr == 0) return 0 */
  :: else ->
     /* pf_emu_nobody_waits: AO_nop_full() (B), AO_int_load(&b->waiters) == 0 */
#ifndef BUG_NO_B
     atomic {
       if
       :: waiters[BKT(w)] == 0 ->
          fast = 1;
          /* the count covers every node queued or pushed (A) and moved (C) */
          assert(incoming[BKT(w)] == 0 && head[BKT(w)] == 0)
       :: else -> fast = 0
       fi
     }
#else
     fast = (waiters[BKT(w)] == 0);                    /* no (B): the word may still be buffered */
#endif
     if
     :: fast -> wret = 0
     :: else ->
#ifdef CFG_HANDLER
        if                                             /* pf_emu_wake_queued: pf_crit_enter; */
        :: sn != 0 -> self_enter(sn)                   /*   pf_self_enter_fast(&here) */
        :: else
        fi;
#endif
        block(BKT(w));                                 /* pf_bucket_lock(tab, idx) */
#ifdef BUG_NO_B
        sb_flush();                                    /* the lock's CAS drains the store buffer */
#endif
#ifndef BUG_DOUBLE_DRAIN
        drain(BKT(w));                                 /* pf_bucket_ready_locked(tab, idx) (I) */
#endif
        queue_wake(BKT(w), w, mask, nr);               /* pf_queue_wake_locked */
#ifndef CFG_VX
        wret = ln;
#else
        wret = cnt;                                    /* ret = pf_queue_wake_locked(...): its n */
#endif
        bunlock(BKT(w));                               /* pf_bucket_unlock */
        wake_list()                                    /* pf_wake_list(&list) */
     fi
  fi;
#ifdef BUG_NO_B
  sb_flush()
#endif
}

/* requeue.c: pf_emu_requeue: CMP_REQUEUE from word w1 to w2. */
inline op_requeue(w1, w2, nr, nr2, val3) {
  b1 = BKT(w1); b2 = BKT(w2);
  woken = 0; moved = 0;
#if !defined(BUG_NO_C) && !defined(BUG_NO_C_FRONT)
  waiters[b2]++;                                       /* (C) AO_int_fetch_and_add_full(&b2->waiters, 1) */
#endif
  /* pf_bucket_lock2: in index order, one lock when the same */
  if
  :: b1 == b2 -> block(b1)
  :: b1 < b2 -> block(b1); block(b2)
  :: b1 > b2 -> block(b2); block(b1)
  fi;
  if
  :: wordv[w1] != val3 -> rret = R_EAGAIN + 100        /* pf_word_load(r->uaddr) != r->val: -EAGAIN */
  :: else ->
#ifndef BUG_DOUBLE_DRAIN
     drain(b1);                                        /* pf_bucket_ready2_locked(t1, i1, t2, i2): */
     if :: b1 != b2 -> drain(b2) :: else fi;           /*   each bucket once (I) */
#endif
     if
     :: nr > 0 -> queue_wake(b1, w1, 255, nr)          /* pf_queue_wake_locked(t1, i1, &k1, ANY, r->nr, &list) */
     :: else
     fi;
     woken = ln;                                       /* woken = list.n */
     if
     :: nr2 > 0 ->
#ifdef BUG_DOUBLE_DRAIN
        drain(b1);                                     /* old: pf_bucket_ready_locked(t1, i1) again */
        if :: b1 != b2 -> drain(b2) :: else fi;        /* old: pf_bucket_ready_locked(t2, i2) */
#endif
        r = head[b1];                                  /* for (ref = b1->head; ref && moved < r->nr2; ref = next) */
        do
        :: r != 0 && moved < nr2 ->
           atomic {
             assert(nd[r].live && nd[r].onq == b1 + 1);
             nx = nd[r].next;                          /* next = w->next */
             skip_it = (nd[r].state != QUEUED || nd[r].key != w1)
           }
           if
           :: skip_it -> r = nx                        /* continue */
           :: !skip_it && b1 != b2 ->
              atomic {
#ifndef BUG_NO_C
                waiters[b2]++;                         /* AO_int_fetch_and_add_full(&b2->waiters, 1) */
#endif
                nd[r].key = w2                         /* pf_node_setkey(w, &k2) */
              }
              nd[r].bucket = b2;                       /* AO_int_store_release(&w->bucket, i2) (E) */
              q_unlink(b1, r);                         /* pf_queue_unlink_locked(t1, b1, w) */
              atomic {
                assert(waiters[b1] > 0);
                waiters[b1]--;                         /* AO_int_fetch_and_add_full(&b1->waiters, -1) */
                q_append(b2, r)                        /* pf_queue_append_locked(t2, b2, w, ref) */
              }
              moved++; r = nx
           :: !skip_it && b1 == b2 ->
              nd[r].key = w2;                          /* pf_node_setkey(w, &k2) */
              moved++; r = nx
           fi
        :: else -> break
        od
     :: else
     fi;
     rret = woken + moved                              /* ret = woken + moved */
  fi;
  /* pf_bucket_unlock2(t1, i1, t2, i2) */
  bunlock(b1);
  if :: b1 != b2 -> bunlock(b2) :: else fi;
#if !defined(BUG_NO_C) && !defined(BUG_NO_C_FRONT)
  waiters[b2]--;                                       /* AO_int_fetch_and_add_full(&b2->waiters, -1) */
#endif
  wake_list();                                         /* pf_wake_list(&list) */
  r = 0; nx = 0
}

/* ---- the processes ------------------------------------------------------------------ */

#ifdef CFG_REGION
#define WAITER_LOCALS byte ret, st, idx, top, rev, s, nx, rs, rcnt, rdead, rcur, rr, rat; bit took, ons
#else
#define WAITER_LOCALS byte ret, st, idx, top, rev, s, nx; bit took
#endif

/* A waiter: `waits` waits of node n; each on word w0 or, if alt, on either word. */
proctype waiter(byte n; byte w0; bit alt; byte mask; bit timed; byte waits)
{
  WAITER_LOCALS;
  byte w, i;
  i = 0;
  do
  :: i < waits ->
     if :: w = w0 :: alt -> w = 1 - w0 fi;
     wait_once(n, w, 0, mask, timed, 0, 0);
     i++
  :: else -> break
  od;
  g_done++
}

#ifdef CFG_REGION
#define WAKER_LOCALS byte lh, lt, ln, lgen[NN + 1], cnt, r, nx, top, rev, s, wret, rs, rcnt, rdead, rcur, rr, rat; bit skip_it, fast, dead_it, seen_alive, ons, fgot; byte fo
#elif defined(CFG_HANDLER)
#define WAKER_LOCALS byte lh, lt, ln, lgen[NN + 1], cnt, r, nx, top, rev, s, wret, idx; bit skip_it, fast, took
#elif defined(CFG_VX)
#define WAKER_LOCALS byte lh, lt, ln, lgen[NN + 1], cnt, r, nx, top, rev, s, wret, vl; bit skip_it, fast
#else
#define WAKER_LOCALS byte lh, lt, ln, lgen[NN + 1], cnt, r, nx, top, rev, s, wret; bit skip_it, fast
#endif

/* WAKE / WAKE_BITSET: the caller stores a new value, then wakes nr (mask). */
proctype waker(byte w; byte nr; bit pickmask)
{
  WAKER_LOCALS;
  byte mask = 255;
  if :: pickmask -> mask = 1 :: true fi;   /* the untimed waiter's bitset is 1 */
  word_store(w, 1);
  op_wake(w, mask, nr, 0);
  g_seen = g_seen + wret;                              /* the caller counts the return */
  /* exact count: the return is the number of nodes it set WAKING */
  g_done++
}

/* CMP_REQUEUE from word w1 to w2: nr in 0..nrmax, nr2 in 0..nr2max, val3 the
 * word's value (0: the compare passes). */
proctype requeuer(byte w1; byte w2; byte nrmax; byte nr2max; byte times)
{
  WAKER_LOCALS;
  byte nr, nr2, b1, b2, woken, moved, rret, k;
  k = 0;
  do
  :: k < times ->
     nr = 0; nr2 = 0;
     do :: nr < nrmax -> nr++ :: break od;
     do :: nr2 < nr2max -> nr2++ :: break od;
     op_requeue(w1, w2, nr, nr2, 0);
     /* exact counts: woken + moved; woken <= nr, moved <= nr2 */
     assert(rret == woken + moved && woken <= nr && moved <= nr2);
     /* what the caller can see: the kernel moves only once nr were woken,
      * so min(return, nr) is the number woken (the storm's invariant) */
     assert(rret >= 100 || moved == 0 || woken == nr);
     if :: rret < 100 && rret < nr -> g_seen = g_seen + rret
        :: rret < 100 && rret >= nr -> g_seen = g_seen + nr
        :: else fi;
     k++
  :: else -> break
  od;
  g_done++
}

/* WAKE_OP on (w1, w2), op SET 1 on w2, cmp always true: wake nr on w1 and
 * nr2 on w2 under both locks (wake_op.c: pf_emu_wake_op). */
proctype wakeop(byte w1; byte w2; byte nr; byte nr2)
{
  WAKER_LOCALS;
  byte b1, b2, l1n;
  b1 = BKT(w1); b2 = BKT(w2);
  if
  :: b1 == b2 -> block(b1)                             /* pf_bucket_lock2 */
  :: b1 < b2 -> block(b1); block(b2)
  :: b1 > b2 -> block(b2); block(b1)
  fi;
  wordv[w2] = 1;                                       /* CAS(uaddr2, old, pf_wakeop_apply(op, old)) */
#ifndef BUG_DOUBLE_DRAIN
  drain(b1);                                           /* pf_bucket_ready2_locked: after the store (I) */
  if :: b1 != b2 -> drain(b2) :: else fi;
#endif
  queue_wake(b1, w1, 255, nr);                         /* pf_queue_wake_locked(t1, i1, ...) */
  l1n = ln;
  queue_wake(b2, w2, 255, nr2);                        /* cmp true: pf_queue_wake_locked(t2, i2, ...) */
  bunlock(b1);                                         /* pf_bucket_unlock2 */
  if :: b1 != b2 -> bunlock(b2) :: else fi;
  g_seen = g_seen + ln;                                /* the caller counts l1.n + l2.n */
  wake_list();                                         /* pf_wake_list(&l1); pf_wake_list(&l2) */
  g_done++
}

#ifdef CFG_VX
/* ---- futex_waitv (waitv.c), the private table ------------------------------------- */

/* One pfutex_waitv on A (entry 0) and B (entry 1), both expecting 0, all
 * of whose words are private (rtab NULL, vx_lead_shared 0): the parker is
 * the thread's node VP (nodes[depth], on no queue), the members are the
 * nodes VM(0), VM(1) of a record lent by the pool (src/thread.c
 * pf_record_lend), queued as plain waiters are.  Results: 0 or 1 (the
 * highest index found woken), VX_E(R_...) an error. */
#define VP 1                  /* the parker */
#define VM(i) (2 + (i))       /* member i, on word i (A = 0, B = 1) */
#ifdef CFG_VX2
/* VX2: A's word in the first shared table, B's in a second one (the
 * buckets stand for the tables: each word has its own).  The first
 * table's parker is VP, on which the thread parks; the second table's is
 * VP2 (a slot there, its local half in a lent record, w->vx_sec), which
 * B's member names.  After a slice the waiter looks at VP2 and the
 * members (pf_vx_any_waking).  A slice that finds nothing parks again
 * and changes nothing: the model ends a slice only when it would find
 * something (else a waiter nobody rings would loop instead of being the
 * invalid end state that shows a lost wakeup). */
#define VP2 4
#endif
#define VX_E(x) (100 + (x))   /* -errno results */
#define VX_NONE 255           /* woken = -1 */

/* pf_vx_end, its second half: no member can be woken now: the parker.
 * st = AO_int_load(&p->state); if (st == QUEUED && CAS(&p->state, QUEUED,
 * GONE)) st = GONE; else st = AO_int_load(&p->state); WAKING (a waker rang
 * it) or DETACHED (a handler, not modelled): collect the token due (D). */
inline vx_disarm(P) {
  st = nd[P].state;                                    /* st = AO_int_load(&p->state) */
  cas = 0;
  if
  :: st == QUEUED ->
     atomic {                                          /* AO_int_compare_and_swap_full(&p->state, */
       if :: nd[P].state == QUEUED -> nd[P].state = GONE; cas = 1 :: else fi   /* QUEUED, GONE) */
     }
  :: else
  fi;
  if
  :: cas -> st = GONE
  :: else -> st = nd[P].state                          /* else st = AO_int_load(&p->state) */
  fi;
  if
  :: st == WAKING || st == DETACHED ->
#ifndef BUG_VX_NO_COLLECT
     nd[P].tok == 1                                    /* pf_emu_port->collect(&w->parker, &p->park, 0) */
#else
     skip                                              /* BUG: the token due not collected */
#endif
  :: else
  fi;
  nd[P].state = IDLE;                                  /* AO_int_store(&p->pi, 0); AO_int_store(&p->state, IDLE) */
  cas = 0
}

proctype vwaiter(bit timed)
{
  byte ret, st, idx, top, rev, s, nx; bit took, cas;
  byte i, k, woken, vret, hi;
  /* pf_emu_waitv: a mismatch before anything is queued (the fast path):
   * for (i = 0; i < nr; i++) if (pf_word_load(e[i].uaddr) != e[i].val) return -EAGAIN */
  do
  :: i < 2 && wordv[i] != 0 -> vret = VX_E(R_EAGAIN); goto vx_returned
  :: i < 2 && wordv[i] == 0 -> i++
  :: else -> break
  od;
  /* pf_vx_once */
  atomic {
    /* pf_waiter_claim: prepare: AO_int_store(&k->word, 0); p->bucket =
     * p->linked = p->counted = p->pushed = 0; AO_int_store(&p->pi, 0) */
    nd[VP].tok = 0;
    nd[VP].live = 1; nd[VP].gen++; nd[VP].cby = 0;     /* ghosts */
    /* pf_record_lend(): rec->vx_lead = p, vx_lead_shared = 0 */
    nd[VM(0)].lead = VP; nd[VM(1)].lead = VP;
#ifndef BUG_VX_ARM_LATE
    nd[VP].state = QUEUED;                             /* AO_int_store(&p->state, QUEUED): armed, */
#endif                                                 /*   before any member queues */
#ifdef CFG_VX2
    /* the second table's parker: a slot claimed there, prepare (its word
     * 0), pi PF_VX_PARKER, armed QUEUED before any member queues; B's
     * member names it (PF_VX_MEMBER(1, rec->vx_pref)) */
    nd[VP2].tok = 0;
    nd[VP2].live = 1; nd[VP2].gen++; nd[VP2].cby = 0;  /* ghosts */
    nd[VM(1)].lead = VP2;
    nd[VP2].state = QUEUED
#else
    skip
#endif
  }
  /* queue the members in entry order, each as a plain waiter queues
   * (wait.c (A), (H)), each word read after its member is queued */
  ret = R_OK; i = 0; k = 0;
  do
  :: ret == R_OK && i < 2 ->
     atomic {
       /* pf_node_prepare(m, &e[i].key, idx, PFUTEX_BITSET_MATCH_ANY, PF_PI_VX):
        * setkey, bitset, pi, AO_int_store(&n->bucket, idx), linked = counted =
        * pushed = 0, in_next = 0; m->seq = i; AO_int_store(&m->state, QUEUED) */
       nd[VM(i)].key = i; nd[VM(i)].bitset = 255; nd[VM(i)].bucket = BKT(i);
       nd[VM(i)].linked = 0; nd[VM(i)].counted = 0; nd[VM(i)].in_next = 0;
       nd[VM(i)].seq = i;
       nd[VM(i)].live = 1; nd[VM(i)].gen++; nd[VM(i)].cby = 0;   /* ghosts */
       nd[VM(i)].state = QUEUED
     }
     atomic {
       waiters[BKT(i)]++;                              /* (A) AO_int_fetch_and_add_full(&b->waiters, 1) */
       nd[VM(i)].counted = 1                           /* m->counted = 1 */
     }
     atomic {                                          /* (H) pf_bucket_push: CAS(in, old, ref) */
       nd[VM(i)].in_next = incoming[BKT(i)]; incoming[BKT(i)] = VM(i);
       k++                                             /* w->vx_pushed = ++k */
     }
     atomic {
       if
       :: wordv[i] != 0 -> ret = R_EAGAIN              /* pf_word_load(e[i].uaddr) != e[i].val: -EAGAIN */
       :: else
       fi;
       i++
     }
  :: else -> break
  od;
#ifdef BUG_VX_ARM_LATE
  nd[VP].state = QUEUED;                               /* BUG: armed after the members queued */
#endif
  /* sleep until the parker is rung or the deadline (no handler here) */
  do
  :: ret == R_OK ->
     if                                                /* ret = pf_waiter_park(w, dl, async): */
     :: nd[VP].tok == 1 -> ret = R_OK                  /*   0 once the word is 1 */
     :: timed && nd[VP].tok == 0 -> ret = R_ETIMEDOUT  /*   the deadline, whenever the token is not there */
#if defined(CFG_VX2) && !defined(BUG_VX2_NO_POLL)
     :: nd[VP].tok == 0 && (nd[VP2].state != QUEUED || nd[VM(0)].state == WAKING
                            || nd[VM(1)].state == WAKING) ->
        break                                          /* a slice's end: pf_vx_any_waking(w, e, mref, nr):
                                                          ret = 0; break (woken, or another parker rung) */
#endif
     fi;
     if
     :: ret != R_OK -> break                           /* if (ret != 0 || */
     :: else
     fi;
     if
     :: nd[VP].state != QUEUED -> break                /*   AO_int_load(&p->state) != PF_W_QUEUED) break */
     :: else
     fi;
     /* a surplus token: back, as wait.c does (tok = AO_int_load(&p->park.word);
      * if (tok) CAS(&p->park.word, tok, 0)).  Unreached here: in the private
      * table only a waker that moved the parker from QUEUED gives it a token
      * (README: a mixed waitv's parker, a region slot, may get a stale one) */
     nd[VP].tok = 0
  :: else -> break
  od;
  /* pf_vx_end(w), in a critical section */
  woken = VX_NONE;
#ifdef BUG_VX_PARKER_FIRST
  vx_disarm(VP);                                       /* BUG?: the parker before the members */
#endif
  i = 0;
  do
  :: i < k ->                                          /* for (k = 0; k < w->vx_pushed; k++), and
                                                          pf_vx_end_table of each shared table */
     dequeue(VM(i), GONE);                             /* pf_waiter_dequeue(&tmp, PF_W_GONE, 0) */
     atomic {
       if
       :: !took && nd[VM(i)].state == WAKING ->        /* && AO_int_load(&m->state) == PF_W_WAKING */
          assert(nd[VM(i)].cby != 0);                  /* counted by a waker */
          if
          :: woken == VX_NONE || nd[VM(i)].seq > woken -> woken = nd[VM(i)].seq   /* (int)m->seq > woken */
          :: else
          fi;
          g_vxfound++                                  /* AO_fetch_and_add1(&pf_vx_woken_total) */
       :: else ->
          assert(took && nd[VM(i)].cby == 0)           /* taken off QUEUED: counted by nobody */
       fi;
       nd[VM(i)].state = IDLE;                         /* AO_int_store(&m->state, PF_W_IDLE) */
       /* ghost: off every queue and stack, uncounted; nothing touches it again */
       assert(nd[VM(i)].onq == 0 && !nd[VM(i)].linked && !nd[VM(i)].counted);
       nd[VM(i)].live = 0;
       i++
     }
  :: else -> break
  od;
#ifdef CFG_VX2
#ifndef BUG_VX2_NO_DISARM2
  vx_disarm(VP2);                                      /* the second table's parker, after its
                                                          members: disarmed or its token collected */
#endif
  assert(nd[VP2].onq == 0);
#endif
#ifndef BUG_VX_PARKER_FIRST
  vx_disarm(VP);                                       /* no member can be woken now: the parker */
#endif
  /* (pf_record_return of the records: members not touched again) */
  if
  :: woken != VX_NONE -> vret = woken                  /* woken wins */
  :: woken == VX_NONE && ret == R_OK -> vret = VX_E(R_EINTR)   /* detached, nothing woken */
  :: else -> vret = VX_E(ret)
  fi;
vx_returned:
  /* pf_self_pop; the ghosts: the waitv is over */
  atomic {
    hi = VX_NONE;
    if :: nd[VM(0)].cby != 0 -> hi = 0 :: else fi;
    if :: nd[VM(1)].cby != 0 -> hi = 1 :: else fi;
    /* woken wins, no lost count: an index iff a member was counted, the
     * highest counted; EAGAIN and ETIMEDOUT only when none was */
    assert((vret < 100) == (hi != VX_NONE));
    assert(vret >= 100 || vret == hi);
    assert(vret != VX_E(R_EINTR));                     /* no handler here: never EINTR */
    assert(nd[VP].onq == 0 && nd[VP].state == IDLE);
    nd[VP].live = 0;
#ifdef CFG_VX2
    nd[VP2].live = 0;                                  /* (its slot given back) */
#endif
    g_done++
  }
}
#endif

#ifdef CFG_HANDLER
/* (G) A thread that waits on A (node 1, untimed) and restarts after an
 * EINTR when its handlers are SA_RESTART (F), and its signal handler
 * (proctype handler), which may run once, at any point of the wait
 * outside the critical sections (HPOINT, and in the park). */
proctype hthread(bit restartable)
{
  WAITER_LOCALS;
  do
  :: wait_once(1, A, 0, 255, 0, 1, 0);                 /* pf_emu_wait_once */
     if                                                /* pf_emu_wait_queued: (F) */
     :: ret == R_EINTR && restartable ->               /* ret == -EINTR && pf_sig_restartable() */
        if
        :: wordv[A] != 0 -> ret = R_EAGAIN; break      /* pf_word_load(r->uaddr) != r->val: -EAGAIN */
        :: else                                        /* the same: wait again */
        fi
     :: else -> break
     fi
  od;
  g_done++
}

/* The handler: its pfutex call detaches the interrupted wait of node 1
 * (pf_self_enter), then does its own op: a WAKE(A, 1) after storing A = 1,
 * or a nested wait on A with the thread's second node (untimed, 2). */
proctype handler()
{
  byte ret, st, idx, top, rev, s, nx; bit took;
  byte lh, lt, ln, lgen[NN + 1], cnt, r, wret; bit skip_it, fast;
end_idle:
  hrun == 1;                                           /* a signal arrives: the thread stands still */
  if
  :: word_store(A, 1);                                 /* the handler's caller stores, then wakes */
     op_wake(A, 255, 1, 1);                            /* pf_emu_wake: detaches on its slow path */
     g_seen = g_seen + wret
  :: wait_once(2, A, 0, 255, 0, 0, 1)                  /* nested: pf_waiter_claim detaches node 1 */
  fi;
  hrun = 0                                             /* the handler returns */
}
#endif

#ifdef CFG_REGION
/* (R) One wait on a region's word w of slot n (wait.c, pf_emu_wait_once
 * with tab->slots): the slot names its owner, the push marks it, and the
 * park goes in slices: a slice that ends without the token while the slot
 * is no longer QUEUED ends the park with 0 (woken wins: its waker died
 * between WAKING and the token, or is slow); the collect waits one slice
 * at most.  timed: the deadline may pass.  Sets ret. */
inline rwait_once(n, w, timed) {
  if
  :: wordv[w] != 0 -> ret = R_EAGAIN; pdone[_pid] = 1 /* pf_wait_mismatch: -EAGAIN */
  :: else ->
  atomic {
    /* pf_waiter_claim: pf_slot_claim: CAS(&n->owner, 0, rg->me); state =
     * IDLE; linked = pushed = counted = 0; prepare: AO_int_store(&k->word, 0) */
    assert(nd[n].owner == 0);
    nd[n].owner = _pid + 1; nd[n].linked = 0; nd[n].pushed = 0; nd[n].counted = 0;
    nd[n].tok = 0;
    nd[n].live = 1; nd[n].gen++; nd[n].cby = 0;        /* ghosts */
    /* pf_emu_wait_once: setkey, bitset, bucket, in_next = 0, seq = pf_region_next_seq(tab) */
    nd[n].key = w; nd[n].bitset = 255; nd[n].bucket = BKT(w); nd[n].in_next = 0;
    nd[n].seq = g_seq; g_seq++;
    nd[n].state = QUEUED                               /* AO_int_store(&n->state, PF_W_QUEUED) */
  }
  atomic {
    waiters[BKT(w)]++;                                 /* (A) AO_int_fetch_and_add_full(&b->waiters, 1) */
    nd[n].counted = 1                                  /* n->counted = 1 */
  }
  nd[n].pushed = 1;                                    /* pf_bucket_push: n->pushed = 1 (push_marked) */
  atomic {                                             /* (H) CAS(in, old, ref) */
    nd[n].in_next = incoming[BKT(w)]; incoming[BKT(w)] = n
  }
  if
  :: wordv[w] != 0 ->                                  /* pf_word_load(r->uaddr) != r->val */
     dequeue(n, GONE);                                 /* pf_waiter_leave(w) */
     if
     :: took -> ret = R_EAGAIN
     :: else ->                                        /* pf_waiter_collect(w): a slice at most (no step: */
        if                                             /*   the word is the token, nothing is consumed) */
        :: nd[n].state == WAKING -> ret = R_OK         /* st == PF_W_WAKING ? 0 : -EAGAIN */
        :: else -> ret = R_EAGAIN
        fi
     fi
  :: else ->
     /* pf_waiter_sleep(w, dl, async): pf_waiter_park in slices */
end_rpark:                                             /* an untimed waiter nobody wakes sleeps on */
     if
     :: nd[n].tok == 1 -> ret = R_OK                   /* park: 0, the token */
     :: timed && nd[n].tok == 0 -> ret = R_ETIMEDOUT   /* the last slice ends at the deadline */
     :: nd[n].tok == 0 && nd[n].state != QUEUED ->     /* a slice ends: AO_int_load(&n->state) != */
        ret = R_OK                                     /*   PF_W_QUEUED: return 0 (R) */
     fi;
     if
     :: ret == R_OK && nd[n].state == QUEUED ->        /* (R) a surplus token: take it back */
        nd[n].tok = 0;                                 /* CAS(&n->park.word, tok, 0) */
        if
        :: nd[n].state == QUEUED -> goto end_rpark
        :: else
        fi
     :: else
     fi;
     if
     :: ret != R_OK ->
        dequeue(n, GONE);                              /* if (pf_waiter_leave(w)) */
        if
        :: took -> goto rreturned                      /* return ret */
        :: else                                        /* pf_waiter_collect(w): a slice at most */
        fi
     :: else
     fi;
     st = nd[n].state;                                 /* st = AO_int_load(&n->state) */
     nd[n].state = IDLE;                               /* AO_int_store(&n->state, PF_W_IDLE) */
     if
     :: st == WAKING -> ret = R_OK                     /* return st == PF_W_WAKING ? 0 : -EINTR */
     :: else -> ret = R_EINTR
     fi
  fi;
rreturned:
  /* pf_self_pop: state = IDLE; pf_waiter_release: pf_slot_free(tab, n, me) */
  atomic {
    assert(nd[n].onq == 0 && nd[n].linked == 0);
    nd[n].state = IDLE;
    assert((nd[n].cby != 0) == (ret == R_OK));         /* woken wins, no lost count */
    if :: ret == R_OK -> g_ret0++ :: else fi;
    slot_free(n);
    pdone[_pid] = 1
  }
  fi
}

/* A process of the region that waits once with slot n; it may die at any
 * step (the killer: its locals vanish, its slot and a lock it holds stay). */
proctype rwaiter(byte n; bit timed)
{
  WAITER_LOCALS;
  {
    rwait_once(n, A, timed)
  } unless { !alive[_pid] }
}

/* A process that stores A = 1 and wakes one (pf_emu_wake on the region's
 * table); it may die at any step. */
proctype rwaker(byte w; byte nr)
{
  WAKER_LOCALS;
  {
    word_store(w, 1);
    op_wake(w, 255, nr, 0);
    atomic { g_seen = g_seen + wret; pdone[_pid] = 1 }  /* the caller counts the return */
  } unless { !alive[_pid] }
}

/* SIGKILL: up to KILLS processes, each at any step, while its calls are
 * in progress (the oracle knows at once). */
proctype killer()
{
  byte k;
  do
  :: k < KILLS ->
end_kill:                                             /* nobody left to kill */
     if
     :: atomic { alive[1] && !pdone[1] -> alive[1] = 0 }
     :: atomic { alive[2] && !pdone[2] -> alive[2] = 0 }
     :: atomic { alive[3] && !pdone[3] -> alive[3] = 0 }
     fi;
     k++
  :: break
  od
}
#endif

#ifdef CFG_FREE
/* (R) Two freers of one dead process's slot (FREE): slot 1 belongs to a
 * process (pid 5) that died after its wait left the queue (GONE, unlinked,
 * uncounted), before its pf_slot_free.  A scavenger and two claimers meet
 * it; a claimer that gets it uses it for a wait and frees it.  Buckets,
 * queues and wakers play no part: the slot is on none. */

/* region/slot.c: pf_att_scavenge(a), for slot n: o = AO_int_load(&n->owner); if (o
 * == 0 || !pf_region_id_dead(a, o)) continue (the oracle, folded into the
 * load); st = AO_int_load(&n->state); not QUEUED or DETACHED:
 * pf_slot_free(tab, n, o) (a QUEUED one is freed under its bucket's lock,
 * pf_slot_free_dead_locked: REGION's walk) */
inline scavenge(n) {
  so = nd[n].owner;
  if
  :: so != 0 && !alive[so - 1] ->
     if
     :: nd[n].state != QUEUED && nd[n].state != DETACHED -> slot_free_dead(n, so)
     :: else
     fi
  :: else
  fi;
  so = 0
}

/* pf_region_scavenge: a process of the region that reclaims dead slots */
proctype scavenger()
{
  byte so, rr; bit fgot;
  {
    scavenge(1);
    pdone[_pid] = 1
  } unless { !alive[_pid] }
}

/* A process that waits once in the region: pf_waiter_claim's
 * pf_slot_claim(tab, &ref, 1) (round 0: the slot, else pf_att_scavenge and
 * round 1), then the wait (sketched: QUEUED, counted, pushed, then the
 * leave), then pf_waiter_release: pf_slot_free(tab, n, me). */
proctype claimer()
{
  byte so, rr, round; bit fgot, got;
  {
    do
    :: round < 2 ->
       if
       :: atomic { nd[1].owner == 0 -> nd[1].owner = _pid + 1 };   /* AO_int_load(&n->owner) == 0 && */
          got = 1; break                                            /*   CAS(&n->owner, 0, a->me) */
       :: nd[1].owner != 0 ->
          if :: round == 0 -> scavenge(1) :: else fi;              /* if (round == 0) pf_att_scavenge(a) */
          round++
       fi
    :: else -> break                                                /* -ENOMEM */
    od;
    if
    :: got ->
       atomic {                                        /* PF_CRASH("slot_claimed"); state = IDLE; */
         assert(nd[1].owner == _pid + 1);              /*   linked = pushed = counted = 0 */
         nd[1].state = IDLE; nd[1].linked = 0; nd[1].pushed = 0; nd[1].counted = 0
       }
       atomic {                                        /* the wait: QUEUED, (A) counted, pushed */
         nd[1].live = 1; nd[1].state = QUEUED; nd[1].counted = 1; nd[1].pushed = 1
       }
       atomic {                                        /* pf_waiter_leave: QUEUED -> GONE, uncounted */
         assert(nd[1].owner == _pid + 1 && nd[1].state == QUEUED && nd[1].counted == 1 && nd[1].pushed == 1);
         nd[1].state = GONE; nd[1].counted = 0
       }
       atomic {                                        /* pf_slot_free(tab, n, me), owner == me: one step */
         assert(nd[1].owner == _pid + 1);              /* AO_int_load(&n->owner) != me: return */
         slot_free(1)                                  /* the fields; CAS(&n->owner, me, 0) */
       }
    :: else
    fi;
    pdone[_pid] = 1
  } unless { !alive[_pid] }
}
#endif

/* ---- configurations ----------------------------------------------------------------- */
#if defined(CFG_REQ2) || defined(CFG_WAITVOP) || defined(CFG_WAITV2B)
#define NPROC 2
#elif defined(CFG_HUNT1) || defined(CFG_HUNT2)
#define NPROC 4
#else
#define NPROC 3
#endif

init {
  atomic {
#if defined(CFG_WAKE)
    /* WAIT vs WAKE_BITSET: an untimed waiter (bitset 1) must be woken;
     * a timed one (bitset 1 or 2) may time out at any point. */
    run waiter(1, A, 0, 1, 0, 1);
    if :: run waiter(2, A, 0, 1, 1, 1) :: run waiter(2, A, 0, 2, 1, 1) fi;
    run waker(A, 2, 1);
#elif defined(CFG_REQ)
    /* timed WAIT on A (and A or B) vs CMP_REQUEUE A -> B, nr 0..1, nr2 0..2 */
    run waiter(1, A, 0, 255, 1, 1);
    run waiter(2, A, 1, 255, 1, 1);
    run requeuer(A, B, 1, 2, 1);
#elif defined(CFG_REQ2)
    /* one waiter, two waits (node reuse), two CMP_REQUEUEs A -> B */
    run waiter(1, A, 1, 255, 1, 2);
    run requeuer(A, B, 1, 1, 2);
#elif defined(CFG_REQWAKE)
    /* CMP_REQUEUE A -> B vs WAKE on B (C): the wake's fast path may skip
     * only an empty bucket; a timed waiter on A */
    run waiter(1, A, 0, 255, 1, 1);
    run requeuer(A, B, 0, 1, 1);
    run waker(B, 1, 0);
#elif defined(CFG_WAKEOP)
    /* WAKE_OP (A, B) vs an untimed waiter on B and a timed one on A */
    run waiter(1, B, 0, 255, 0, 1);
    run waiter(2, A, 0, 255, 1, 1);
    run wakeop(A, B, 1, 1);
#elif defined(CFG_FREE)
    /* (R): slot 1 owned by a dead process (pid 5), its wait over; a
     * scavenger and two claimers; any one of them may die at any step */
    alive[0] = 1; alive[1] = 1; alive[2] = 1; alive[3] = 1; alive[4] = 1;
    nd[1].owner = 6; nd[1].state = GONE; nd[1].pushed = 1; nd[1].live = 1;
    run scavenger();
    run claimer();
    run claimer();
    run killer();
#elif defined(CFG_REGION)
    /* (R): a timed waiter (slot 1) and an untimed one (slot 2) of a region,
     * WAKE(A, 1) after A = 1; any one of them may die at any step */
    alive[0] = 1; alive[1] = 1; alive[2] = 1; alive[3] = 1; alive[4] = 1;
    run rwaiter(1, 1);
    run rwaiter(2, 0);
    run rwaker(A, 1);
    run killer();
#elif defined(CFG_HANDLER)
    /* (G): a thread whose wait on A its handler interrupts (a wake, or a
     * nested wait), restarting or not (F), an untimed waiter on A (node
     * 3) the handler's wake may take, and WAKE(A, 2) after A = 1 */
    if :: run hthread(0) :: run hthread(1) fi;
    run handler();
    run waiter(3, A, 0, 255, 0, 1);
    run waker(A, 2, 0);
#elif defined(CFG_WAITV)
    /* futex_waitv on A (member 0) and B (member 1), timed or not, vs
     * WAKE(A, 1) after A = 1 and WAKE(B, 1) after B = 1 */
    if :: run vwaiter(0) :: run vwaiter(1) fi;
    run waker(A, 1, 0);
    run waker(B, 1, 0);
#elif defined(CFG_WAITVREQ)
    /* futex_waitv on A and B, timed or not, vs CMP_REQUEUE A -> B (nr
     * 0..1, nr2 0..1: member 0 may be woken on A or moved to B) and
     * WAKE(B, 2) after B = 1 (it may find both members on B) */
    if :: run vwaiter(0) :: run vwaiter(1) fi;
    run requeuer(A, B, 1, 1, 1);
    run waker(B, 2, 0);
#elif defined(CFG_WAITVOP)
    /* futex_waitv on A and B, timed or not, vs WAKE_OP(A, B) (B = 1 under
     * both locks, wakes 1 on A and 1 on B: l1.n + l2.n) */
    if :: run vwaiter(0) :: run vwaiter(1) fi;
    run wakeop(A, B, 1, 1);
#elif defined(CFG_WAITV2)
    /* futex_waitv on A (first table) and B (second table, its own
     * parker), timed or not, vs WAKE(A, 1) after A = 1 and WAKE(B, 1)
     * after B = 1 */
    if :: run vwaiter(0) :: run vwaiter(1) fi;
    run waker(A, 1, 0);
    run waker(B, 1, 0);
#elif defined(CFG_WAITV2B)
    /* the same, only WAKE(B, 1) after B = 1: an untimed waitv returns
     * only through the poll of the second table's parker */
    if :: run vwaiter(0) :: run vwaiter(1) fi;
    run waker(B, 1, 0);
#elif defined(CFG_HUNT1)
    /* larger: three timed waiters (A, A or B), one requeuer, two calls */
    run waiter(1, A, 0, 255, 1, 1);
    run waiter(2, A, 1, 255, 1, 1);
    run waiter(3, A, 1, 255, 1, 1);
    run requeuer(A, B, 2, 2, 2);
#elif defined(CFG_HUNT2)
    /* larger: two timed waiters with two waits each, two requeuers */
    run waiter(1, A, 1, 255, 1, 2);
    run waiter(2, A, 1, 255, 1, 2);
    run requeuer(A, B, 1, 2, 1);
    run requeuer(A, B, 1, 2, 1);
#else
#error "no configuration: -DCFG_WAKE, CFG_REQ, CFG_REQ2, CFG_REQWAKE, CFG_WAKEOP, CFG_HANDLER, CFG_REGION, CFG_FREE, CFG_WAITV, CFG_WAITVREQ, CFG_WAITVOP, CFG_WAITV2 or CFG_WAITV2B"
#endif
  }
#if defined(CFG_FREE)
  /* the end: every process finished or died */
  timeout;
  assert((alive[1] == 0 || pdone[1]) && (alive[2] == 0 || pdone[2]) && (alive[3] == 0 || pdone[3]));
  /* no live process keeps the slot after its calls; with no death it
   * is free (the dead owner's slot reclaimed, the claimers' freed) */
  assert(nd[1].owner == 0 || !alive[nd[1].owner - 1]);
  assert(!(alive[1] && alive[2] && alive[3]) || nd[1].owner == 0)
}
#elif defined(CFG_REGION)
  /* the end: nothing can move (a process stuck in a lock is an invalid
   * end state; a live untimed waiter may sleep on only as below) */
  timeout;
  /* every count made is a wait that returns 0, or one whose process died
   * before returning (pid n waits with slot n; a death between the
   * waker's look and its count is one just after the count: nobody can
   * tell them apart); the waker's return is its count unless it died */
  assert(g_woken == g_ret0 + (!alive[1] && !pdone[1] && nd[1].cby != 0) + (!alive[2] && !pdone[2] && nd[2].cby != 0));
  assert(!alive[3] || (pdone[3] && g_seen == g_woken));
  /* a live waiter still asleep: queued, uncounted, and the wake(1) woke a
   * live one (a waiter queued behind a dead one is reached) or died */
  assert(!alive[1] || pdone[1]);
  assert(!alive[2] || pdone[2] || (nd[2].state == QUEUED && nd[2].cby == 0 && (g_wlive == 1 || !alive[3])));
  /* a waker counts only slots whose process lived when it looked */
  assert(g_wlive == g_woken);
  /* the count never below the nodes it covers (an excess may stay, region/lock.c) */
  assert(waiters[0] >= nd[1].counted + nd[2].counted);
  assert(lock[0] == 0 || !alive[lock[0] - 1])
}
#else
  /* the end: everyone finished (a process stuck in a park or a lock is an
   * invalid end state); the counts are exact */
  g_done == NPROC;
#ifndef CFG_VX
  assert(g_woken == g_ret0);
  assert(g_seen == g_ret0);     /* the callers' counts: no lost wakeup as a caller sees it */
#else
  /* the storm's invariant (tests/waitv_storm): the members set WAKING, and
   * the wakes the callers count, are the members the waitv's end found */
  assert(g_woken == g_vxfound);
  assert(g_seen == g_vxfound);
  assert(nd[1].state == IDLE && nd[2].state == IDLE && nd[3].state == IDLE);
#ifdef CFG_VX2
  assert(nd[VP2].state == IDLE);
#endif
#endif
  assert(waiters[0] == 0 && waiters[1] == 0);
  assert(incoming[0] == 0 && incoming[1] == 0 && head[0] == 0 && head[1] == 0);
  assert(lock[0] == 0 && lock[1] == 0)
}
#endif
