/* pi.pml - a Promela model of the emulated priority-inheritance futex ops
 * (src/pi.c: FUTEX_LOCK_PI, TRYLOCK_PI, UNLOCK_PI) and of the hand-off of
 * a PI lock whose owner died (the blocked lockers' owner poll, and the
 * robust list's walk, src/robust.c pf_robust_word_died), with the user
 * space fast paths of a PI mutex around them (glibc's, examples/pi_mutex.c)
 * and the ops' own lock-free fast path for an uncontended word (F).
 *
 * Checked exhaustively by Spin (model/pi-check.txt, the lines for
 * model/check.sh); see there for the configurations, the properties, the
 * bug flags and what is not modelled.  Every step names the code it
 * stands for (function, fragment).  The conventions are pfutex.pml's:
 *
 * Memory model: sequentially consistent (every AO_*_full access, the
 * user's compare-and-swaps, the OS's answers).
 *
 * Granularity: each access to something another process reads or writes
 * without holding the bucket lock (the PI word W, a node's state and park
 * word, the oracle alive[], the robust registration's slot) is a step of
 * its own; what only the bucket lock's holder touches (the queue, the
 * incoming stack, the count waiters, a node's links) is folded into the
 * neighbouring step.  In particular the push (H): pf_pi_lock_once pushes
 * its node while it holds the bucket lock, and every holder of that lock
 * drains the stack first (pf_bucket_ready_locked) before it looks at the
 * queue, so to every later look the node is on the queue, in arrival
 * order: the model appends it at the push.
 *
 * The table is a region's (the lockers are processes; tab->slots set):
 * the ESRCH retry of pf_emu_pi and the park's region slices run their
 * robust_check op.  A private table is the same without those two (no
 * registration to walk: -DROBUST off gives its behaviour for the locks).
 *
 * Death: a locker may die (SIGKILL) only while it holds the PI lock in
 * its critical section (-DCFG_DEAD: locker 1; -DCFG_LATE: locker 1 always);
 * the OS says so exactly (the ghost alive[]: pf_os_tid_alive and
 * pf_region_id_dead, an oracle the OS vouches for, as pfutex.pml's REGION).
 * Deaths inside pfutex's own code (a bucket lock held: the takeover and
 * rebuild) are pfutex.pml's REGION, not here.
 *
 * Configurations (-DCFG_...): PI, DEAD, LATE (see init); -DROBUST: locker
 * 1's robust list holds the PI word (a PI entry) and is registered in the
 * region, walked by survivors; -DWALKER_TOO (LATE): a survivor that is no
 * locker walks too (CFG_DEAD -DROBUST always has it); -DEXIT_WALK: the
 * death is a thread's exit that walks its own list first (the private
 * table's robust case); -DC1=n, -DC2=n: cycles of locker 1 (PI, default
 * 2) and 2 (DEAD, default 1).  Bug flags (-DBUG_PI_...): UNLOCK_NO_TOP,
 * NO_WAITERS_BIT, DOUBLE_HANDOFF, TIMEOUT_LOSES, HANDOFF_NO_OD, NO_POLL,
 * NO_ESRCH_RETRY, NO_WALK_WAIT (the code before the wait for another
 * survivor's walk: a locker answered ESRCH while that walk was in
 * progress), FAST_UNLOCK_ANY (see fast_unlock).  -DSTRICT_ESRCH: the
 * kernel's rule that a robust owner's death never answers ESRCH.
 * -DWITNESS=k: see WIT below.  -DNO_QUEUE_INVARIANT: the monitor without
 * its queue clause (to see a bug's harm rather than the broken
 * invariant). */

/* ---- the word (src/pi.c) ------------------------------------------------ */
#define TIDM    15        /* PF_PI_TID: the owner's id (lockers 1..3) */
#define OD      64        /* PF_FUTEX_OWNER_DIED (bit 30) */
#define WAITERS 128       /* PF_FUTEX_WAITERS (bit 31) */

/* emu.h: enum { PF_W_IDLE = 0, PF_W_QUEUED, PF_W_WAKING, PF_W_DETACHED, PF_W_GONE } */
#define IDLE 0
#define QUEUED 1
#define WAKING 2
#define GONE 4

/* results */
#define R_OK 0
#define R_WAIT 1          /* pf_pi_attempt_locked: 1, queue and sleep */
#define R_ESRCH 2
#define R_EAGAIN 3
#define R_EDEADLK 4
#define R_ETIMEDOUT 5
#define R_NONE 9

/* the region's robust registration slot (src/region/robust.c) */
#define RIDLE 0           /* PF_W_IDLE: free */
#define RROBUST 1         /* PF_W_ROBUST: a registration */

#define NT 3              /* lockers 1..3 */
#define WALKER 4          /* the survivor's id */

/* -DWITNESS=k: an assertion that fails where witness k is reached (a
 * check that the configurations reach what they are meant to; see
 * pi-check.txt); none without it */
#ifdef WITNESS
#define WIT(k) assert(WITNESS != k);
#else
#define WIT(k)
#endif

/* ---- shared state ---------------------------------------------------------- */
byte W;                   /* the PI futex word */
byte lk;                  /* pf_bucket: lock (0 free, else the holder's id) */
byte q[NT];               /* pf_bucket: the queue (head, tail, links), FIFO; */
byte qn;                  /*   the incoming stack folded in (above) */
byte waiters;             /* pf_bucket: waiters (A) */
byte st[NT + 1];          /* pf_node: state, locker t's node is t */
bit tok[NT + 1];          /* pf_park: word (0 armed, 1 token given) */
bit alive[WALKER + 1];    /* the oracle: the OS says exactly who is dead */
byte regst;               /* the registration slot: state (RIDLE, RROBUST) */
byte regown;              /*   owner (the registering process, then a walker's id) */
byte regtid;              /*   the dead thread's id (n->pi & PF_PI_TID) */

/* ghosts */
byte incs;                /* threads in the critical section */
byte holder;              /* the live thread in it, 0 none */
byte deaths;              /* owners that died holding the lock */
byte od_seen;             /* lockers that got the lock with FUTEX_OWNER_DIED */
byte g_done;              /* lockers finished, or dead */
bit g_wdone;              /* the walker finished */
byte g_esrch;             /* locks that returned ESRCH */
byte g_walks;             /* robust walks made of the dead owner's list */
byte g_timedout;          /* locks that returned ETIMEDOUT */

/* ---- the queue, the bucket lock (src/table.c) --------------------------------- */

/* pf_bucket_lock (CAS(l, 0, me), spinning) / pf_bucket_unlock */
inline block(me) {
  atomic { lk == 0 -> lk = me }
}
inline bunlock(me) {
  assert(lk == me); lk = 0
}

/* pf_bucket_push (H) under the lock, drained by the next holder: the
 * append at the queue's tail (pf_queue_append_locked); ghost check: on no
 * queue yet */
inline q_append(n) {
  assert(q[0] != n && q[1] != n && q[2] != n);
  if                                       /* q[qn] = n (NT == 3; the unused slots are 0) */
  :: qn == 0 -> q[0] = n
  :: qn == 1 -> q[1] = n
  :: qn == 2 -> q[2] = n
  fi;
  qn++
}

/* pf_queue_unlink_locked: n off the queue, wherever it is.  Sets took (1:
 * it was linked: pf_node_unlink_locked then gives back its count) */
inline q_unlink(n) {
  if                                       /* find it, close the gap (NT == 3) */
  :: q[0] == n -> q[0] = q[1]; q[1] = q[2]; q[2] = 0; took = 1
  :: q[0] != n && q[1] == n -> q[1] = q[2]; q[2] = 0; took = 1
  :: q[0] != n && q[1] != n && q[2] == n -> q[2] = 0; took = 1
  :: else -> took = 0
  fi;
  if
  :: took ->
     qn--;
     assert(waiters > 0); waiters--        /* pf_node_uncount_locked: waiters - 1 */
  :: else
  fi
}

/* pf_pi_top_locked: the first QUEUED PI locker (every linked node is
 * QUEUED here: wakers and leaves unlink under the lock; no process dies
 * queued, so the reap op never frees one).  Sets n (0: none). */
inline top() {
  atomic { n = q[0]; if :: qn == 0 -> n = 0 :: else -> assert(st[n] == QUEUED) fi }
}

/* pf_node_wake_locked(tab, b, n, ref, &l): unlink, linked = 0, state =
 * WAKING (the store its owner reads without the lock), uncount, onto the
 * caller's wake list (lst: one node at most per call here) */
inline wake_locked(n) {
  atomic {
    q_unlink(n); assert(took); took = 0;
    assert(st[n] == QUEUED); st[n] = WAKING;
    assert(lst == 0); lst = n
  }
}

/* pf_wake_list: the unpark, the last touch (wait.c (D)) */
inline wake_list() {
  if
  :: lst != 0 -> tok[lst] = 1; lst = 0     /* pf_emu_port->unpark(&w->park, ...) */
  :: else
  fi
}

/* ---- src/pi.c ------------------------------------------------------------------ */

/* pf_pi_handoff_dead_locked(tab, i, key, uaddr, dt, od = 1, &l), the
 * bucket lock held, made ready: while the word names the dead owner dt,
 * to the first queued locker (its id | WAITERS | OWNER_DIED), else
 * (WAITERS kept) | OWNER_DIED, the id cleared.  Sets hres (1: handed). */
inline handoff_dead_locked(dt) {
  do
  :: v = W;                                          /* v = pf_word_load(uaddr) */
     if
#ifndef BUG_PI_DOUBLE_HANDOFF
     :: (v & TIDM) != dt -> WIT(11) hres = 0; break  /* if ((v & PF_PI_TID) != tid) return 0 */
#endif
     :: else ->
        top();                                       /* n = pf_pi_top_locked(...) */
        if
        :: n != 0 -> nv = WAITERS | (v & OD) | OD | n   /* WAITERS | OWNER_DIED kept | od | n's id */
        :: else -> nv = (v & WAITERS) | OD           /* od: (v & WAITERS) | OWNER_DIED */
        fi;
#ifdef BUG_PI_HANDOFF_NO_OD
        nv = nv & ~OD;                               /* BUG: the new owner is not told */
#endif
        if
        :: atomic { W == v -> W = nv } ->            /* pf_pi_cas(uaddr, v, nv) */
           if
           :: n != 0 -> wake_locked(n)               /* pf_node_wake_locked(...) */
           :: else
           fi;
           hres = (n != 0); break                    /* return n != NULL */
        :: atomic { W != v -> skip }                 /* the CAS failed: continue */
        fi
     fi
  od;
  n = 0; v = 0; nv = 0
}

/* pf_pi_attempt_locked(tab, i, k, uaddr, t, try, &l), the bucket lock held
 * and made ready: sets ret (R_OK taken, R_WAIT queue, R_ESRCH, R_EAGAIN,
 * R_EDEADLK). */
inline attempt(t, try) {
  do
  :: v = W;                                          /* v = pf_word_load(uaddr) */
     if
     :: (v & TIDM) == t -> ret = R_EDEADLK; break    /* our own: -EDEADLK */
     :: (v & TIDM) == 0 ->                           /* free */
        top();
        nv = (v & OD) | t;                           /* nv = (v & OWNER_DIED) | tid; */
        if :: n != 0 -> nv = nv | WAITERS :: else fi;   /* | WAITERS with PI waiters queued */
        n = 0;
        if
        :: atomic { W == v -> W = nv } -> ret = R_OK; break   /* pf_pi_cas: return 0 */
        :: atomic { W != v -> WIT(18) skip }          /* continue */
        fi
     :: else ->                                      /* held */
        nv = v | WAITERS;
#ifdef BUG_PI_NO_WAITERS_BIT
        nv = v;                                      /* BUG: queue without FUTEX_WAITERS */
#endif
        if
        :: nv == v -> cas = 1
        :: nv != v ->
           if
           :: atomic { W == v -> W = nv; cas = 1 }   /* pf_pi_cas(uaddr, v, nv) */
           :: atomic { W != v -> WIT(17) cas = 0 }   /* failed: continue */
           fi
        fi;
        if
        :: cas ->
           cas = 0;
           if
           :: !alive[v & TIDM] ->                    /* !pf_os_tid_alive(v & PF_PI_TID) */
              top();
              hres = 0;
              if
              :: n != 0 ->                           /* pf_pi_top_locked && */
                 d = v & TIDM;
                 handoff_dead_locked(d);             /*   pf_pi_handoff_dead_locked(..., 1, l) */
                 d = 0
              :: else
              fi;
              if
              :: hres -> WIT(1) hres = 0             /* handed to the first locker: continue */
              :: else -> WIT(12) ret = R_ESRCH; break   /* return -ESRCH (WAITERS stays set) */
              fi
           :: alive[v & TIDM] ->
              if :: try -> ret = R_EAGAIN :: else -> ret = R_WAIT fi;
              break                                  /* return try ? -EAGAIN : 1 */
           fi
        :: else
        fi
     fi
  od;
  v = 0; nv = 0; n = 0; hres = 0
}

/* pf_pi_handoff_dead(tab, key, uaddr, dt, od = 1, only_queued): lock,
 * ready (the drain: folded), hand off if a locker is queued or
 * !only_queued, unlock, the wake list. */
inline handoff_dead(me, dt, only_queued) {
  block(me);                                         /* pf_bucket_lock(tab, idx) */
  top();
  if
  :: !only_queued || n != 0 ->                       /* (!only_queued || pf_pi_top_locked(...)) */
     handoff_dead_locked(dt);
#ifdef WITNESS
     if
     :: hres && only_queued -> WIT(2) skip            /* a poll handed it over */
     :: hres && !only_queued -> WIT(3) skip           /* a walk handed it to a queued locker */
     :: !hres && !only_queued && (W & TIDM) == 0 -> WIT(4) skip   /* a walk freed it, OWNER_DIED */
     :: else
     fi
#else
     skip
#endif
  :: else
  fi;
  n = 0; hres = 0;
  bunlock(me);                                       /* pf_bucket_unlock */
  wake_list()                                        /* pf_wake_list(&list) */
}

/* src/robust.c pf_robust_word_died(uaddr, dt, pi = 1, pending = 0) of the
 * PI entry: the word, if it names the dead thread, goes to its first
 * queued locker, else becomes (WAITERS kept) | OWNER_DIED
 * (pf_emu_pi_owner_died: the private key's call, only_queued, finds no
 * locker of this word in the walker's own private table: left out; the
 * shared key's, only_queued 0). */
inline robust_word_died(me, dt) {
  g_walks++;                                         /* ghost */
  v = W;                                             /* pf_os_copy_in(&v, uaddr, sizeof v) */
  if
  :: (v & TIDM) == dt -> v = 0; handoff_dead(me, dt, 0)   /* pf_emu_pi_owner_died(uaddr, tid) */
  :: else -> v = 0                                   /* not its any more: return 0 */
  fi
}

/* src/region/robust.c pf_region_robust_check(tab) -> pf_rgn_robust_reap:
 * a registration (PF_W_ROBUST) whose owner the OS says is dead is made
 * the caller's (CAS(&n->owner, o, me)), walked and freed.  One owner
 * word: of two checkers one walks; the other passes the slot over (its
 * owner is the walker now, alive).  Ghost rcbusy: the caller found the
 * dead owner's registration claimed by another, live, process (its walk
 * may not have reached the word yet). */
inline robust_check(me) {
#ifdef ROBUST
  atomic {                                           /* AO_int_load(&slots[s].state) == PF_W_ROBUST; */
    if                                               /*   o = AO_int_load(&slots[s].owner) */
    :: regst != RIDLE -> o = regown
    :: else -> o = 0
    fi
  }
  if
  :: o != 0 && o != me ->                            /* o == 0 || o == a->me: continue */
     if
     :: !alive[o] ->                                 /* pf_region_id_dead(a, o) */
        atomic {                                     /* pf_rgn_robust_reap: CAS(&n->owner, o, a->me) */
          if :: regown == o -> regown = me; got = 1 :: else -> got = 0 fi
        }
        if
        :: got ->
           robust_word_died(me, regtid);             /* pf_robust_walk_view -> pf_robust_word_died */
           atomic { regst = RIDLE; regown = 0 }      /* hdr->robust--; pf_slot_free(tab, n, a->me) */
        :: else -> rcbusy = 1                        /* another took it first (ghost: walking) */
        fi;
        got = 0
     :: alive[o] ->                                  /* alive: passed over (last_alive = o) */
        if :: !alive[regtid] -> rcbusy = 1 :: else fi   /* ghost: a walker has it (the */
                                                     /*   registered thread is dead) */
     fi
  :: else
  fi;
  o = 0
#else
  skip                                               /* no registration: nothing to walk */
#endif
}

/* pf_pi_poll_owner(p): owner = word's id; gone (the OS says so): the
 * hand-off to the first queued locker, OWNER_DIED set.  o: the owner read
 * (by the slice's step, below). */
inline poll_owner(t) {
  if
  :: o != 0 && o != t && !alive[o] ->                /* !owner || owner == p->tid || pf_os_tid_alive(owner) */
     handoff_dead(t, o, 1)                           /* pf_pi_handoff_dead(tab, key, uaddr, owner, 1, 1) */
  :: else
  fi;
  o = 0
}

/* A slice's end is a step only when what follows it can act: the node is
 * no longer QUEUED, or the poll would find a dead owner (POLL_ACTS), or a
 * robust check would find the dead owner's registration (RC_ACTS); any
 * other slice end parks again with nothing changed (a stutter, left out:
 * an untimed locker nobody hands the lock to then blocks, an invalid end
 * state).  The poll's read of the word is the slice's step. */
#ifndef BUG_PI_NO_POLL
#define POLL_ACTS(t) ((W & TIDM) != 0 && (W & TIDM) != t && !alive[W & TIDM])
#else
#define POLL_ACTS(t) false  /* BUG: a blocked locker never asks whether the owner lives */
#endif
#ifdef ROBUST
#define RC_ACTS(t) (regst != RIDLE && regown != 0 && regown != t && !alive[regown])
#else
#define RC_ACTS(t) false
#endif

/* pf_waiter_sleep_poll(w, dl, async, &poll): the park in poll slices
 * (pf_waiter_park_poll, PF_PI_POLL_NS) of region slices (pf_waiter_park,
 * robust_check at each); timed: the deadline may pass at any step while
 * the token has not come.  Sets ret (R_OK: handed the lock, R_ETIMEDOUT). */
inline sleep_poll(t, timed) {
  skip;                                              /* (a label cannot open an inline) */
park:
  if
  :: tok[t] == 1 -> ret = R_OK;                      /* the port's park: 0, the token */
     if
     :: st[t] == QUEUED ->                           /* ret == 0 && state == QUEUED: */
        WIT(16) tok[t] = 0;                          /*   (R) a surplus token: CAS(&park.word, tok, 0) */
        if :: st[t] == QUEUED -> goto park :: else fi   /* still QUEUED: park again */
     :: else
     fi
  :: timed && tok[t] == 0 -> ret = R_ETIMEDOUT       /* the deadline: the last slice ends */
  :: tok[t] == 0 && st[t] != QUEUED ->               /* a poll slice ends, not QUEUED: */
     ret = R_ETIMEDOUT                               /*   pf_waiter_park_poll returns -ETIMEDOUT */
  :: tok[t] == 0 && st[t] != QUEUED ->               /* a region slice ends, not QUEUED: */
     WIT(8) ret = R_OK                               /*   pf_waiter_park returns 0 (R) */
  :: atomic { tok[t] == 0 && st[t] == QUEUED && POLL_ACTS(t) -> o = W & TIDM } ->
     poll_owner(t); goto park                        /* a poll slice ends: poll->fn(poll->arg) */
  :: tok[t] == 0 && st[t] == QUEUED && RC_ACTS(t) -> /* a region slice ends: */
     robust_check(t);                                /*   w->tab->ops->robust_check(w->tab) */
     if
     :: st[t] != QUEUED -> ret = R_OK                /* state != QUEUED: return 0 */
     :: else -> goto park
     fi
  fi;
  if
  :: ret != R_OK ->
     /* pf_waiter_leave(w): pf_waiter_dequeue(w, PF_W_GONE, 0) */
     block(t);                                       /* pf_bucket_lock; the bucket re-check and */
     atomic {                                        /*   ready: folded (no requeue of PI lockers) */
       q_unlink(t);                                  /* if (n->linked) pf_node_unlink_locked */
       took = (st[t] == QUEUED);                     /* queued = state == PF_W_QUEUED */
       if :: took -> st[t] = GONE :: else fi         /* AO_int_store(&n->state, to) */
     }
     bunlock(t);
     if
     :: took -> WIT(6) st[t] = IDLE; took = 0; goto slept   /* state = IDLE; return -ETIMEDOUT */
     :: else
     fi;
     WIT(7) tok[t] == 1                              /* pf_waiter_collect(w): (D) the token is due */
  :: else
  fi;
  atomic {
    stv = st[t];                                     /* st = AO_int_load(&n->state) */
    st[t] = IDLE                                     /* AO_int_store(&n->state, PF_W_IDLE) */
  };
#ifndef BUG_PI_TIMEOUT_LOSES
  if :: stv == WAKING -> ret = R_OK :: else -> assert(false) fi;   /* st == WAKING ? 0 : -EINTR */
#else
  if :: ret == R_ETIMEDOUT -> skip :: else -> ret = R_OK fi;   /* BUG: the deadline wins */
#endif
  stv = 0;
slept:
  skip
}

/* pf_pi_lock_once(r, tab, key, t, async): lock, ready, the attempt; 1:
 * QUEUED, (A), pushed (H) under the lock; unlock, the wake list; sleep. */
inline lock_once(t, timed) {
  tok[t] = 0;                                        /* pf_waiter_claim: prepare arms the park word */
  block(t);                                          /* pf_bucket_lock(tab, idx) */
  attempt(t, 0);                                     /* pf_pi_attempt_locked(..., 0, &list) */
  if
  :: ret == R_WAIT ->
     atomic {
       st[t] = QUEUED;                               /* AO_int_store(&n->state, PF_W_QUEUED) */
       waiters++;                                    /* (A) */
       q_append(t)                                   /* pf_bucket_push (H), drained by the next holder */
     }
  :: else
  fi;
  bunlock(t);                                        /* pf_bucket_unlock */
  wake_list();                                       /* pf_wake_list(&list) */
  if
  :: ret == R_WAIT -> sleep_poll(t, timed)           /* pf_waiter_sleep_poll: 0, handed the lock */
  :: else
  fi
}

/* pf_pi_trylock: the attempt alone, no node */
inline trylock_once(t) {
  block(t);
  attempt(t, 1);                                     /* pf_pi_attempt_locked(..., 1, &list) */
  bunlock(t);
  wake_list()
}

/* (F) pf_pi_fast: the uncontended lock (from 0 to our id) or unlock (from
 * our id alone to 0), no bucket lock: the word loaded, the bucket's count
 * loaded, one compare-and-swap; anything else: the slow path.  Bug flag
 * BUG_PI_FAST_UNLOCK_ANY: the unlock frees any word with our id (FUTEX_
 * WAITERS ignored: a queued locker is never handed the lock). */
inline fast_lock(t) {
  v = W;                                             /* pf_word_load(uaddr) */
  if
  :: v == 0 && waiters == 0 ->                       /* && AO_int_load(&b->waiters) == 0 */
     atomic { if :: W == v -> W = t; fast = 1 :: else -> fast = 0 fi }   /* pf_pi_cas(uaddr, 0, tid) */
  :: else -> fast = 0
  fi;
  v = 0
}
inline fast_unlock(t) {
  v = W;
  if
#ifndef BUG_PI_FAST_UNLOCK_ANY
  :: v == t && waiters == 0 ->
#else
  :: (v & TIDM) == t ->
#endif
     atomic { if :: W == v -> W = 0; fast = 1 :: else -> fast = 0 fi }   /* pf_pi_cas(uaddr, tid, 0) */
  :: else -> fast = 0
  fi;
  v = 0
}

/* pf_emu_pi(r, LOCK_PI / TRYLOCK_PI): the op; a dead owner with nobody
 * queued (ESRCH): the robust lists of dead processes walked now
 * (tab->ops->robust_check), and the op once more. */
inline emu_pi(t, timed, trylk) {
  walked = 0;
  fast_lock(t);                                      /* pf_pi_fast(..., 0): (F) */
  do
  :: fast -> fast = 0; ret = R_OK; break             /* taken: return 0 */
  :: else -> if
     :: trylk -> trylock_once(t)
     :: else -> lock_once(t, timed)
     fi;
     if
#ifndef BUG_PI_NO_ESRCH_RETRY
     :: ret == R_ESRCH && !walked ->                 /* ret == -ESRCH && !walked && tab->slots */
        dd = W & TIDM;                               /* dead = pf_word_load(uaddr) & PF_PI_TID */
        robust_check(t);                             /* tab->ops->robust_check(tab) */
#ifndef BUG_PI_NO_WALK_WAIT
        /* while (dead && tab->ops->robust_pending(tab, dead)): nanosleep 1 ms,
         * tab->ops->robust_check(tab) again: a registration of the dead
         * owner's still there (another survivor's walk in progress) is
         * waited for, as a Linux locker waits for the owner's exit (the
         * nap cap, PF_PI_WALK_WAITS, for a walker stopped for good, is
         * not modelled) */
        do
        :: dd != 0 && regst != RIDLE && regtid == dd -> robust_check(t)
        :: else -> break
        od;
#endif
        walked = 1
#endif
     :: else -> break
     fi
  od
}

/* pf_emu_pi(r, UNLOCK_PI) -> pf_pi_unlock: our own id, else EPERM; under
 * the lock, the first queued locker is handed the lock (its id | WAITERS,
 * OWNER_DIED cleared), else 0. */
inline unlock_pi(t) {
  fast_unlock(t);                                    /* pf_pi_fast(..., 1): (F) */
  if
  :: fast -> fast = 0
  :: else ->
  assert((W & TIDM) == t);                           /* pf_word_load(uaddr) & PF_PI_TID != tid: -EPERM */
  block(t);                                          /* pf_bucket_lock; ready (drain: folded) */
  do
  :: v = W;                                          /* v = pf_word_load(uaddr) */
     assert((v & TIDM) == t);                        /* != tid: -EPERM (never: we own it) */
     top();                                          /* n = pf_pi_top_locked(...) */
#ifdef BUG_PI_UNLOCK_NO_TOP
     n = 0;                                          /* BUG: 0 stored with a locker queued */
#endif
     if
     :: n != 0 ->
        if
        :: atomic { W == v -> W = WAITERS | n } ->   /* pf_pi_cas(uaddr, v, WAITERS | n's id) */
           WIT(9) wake_locked(n); break              /* pf_node_wake_locked(...) */
        :: atomic { W != v -> skip }                 /* continue */
        fi
     :: n == 0 ->
        if
        :: atomic { W == v -> W = 0 } ->             /* pf_pi_cas(uaddr, v, 0) */
#ifdef WITNESS
           if :: (v & WAITERS) -> WIT(10) skip :: else fi;   /* WAITERS with nobody queued */
#endif
           break
        :: atomic { W != v -> skip }                 /* continue */
        fi
     fi
  od;
  v = 0; n = 0;
  bunlock(t);
  wake_list()
  fi
}

/* ---- the processes ---------------------------------------------------------------- */

#define LOCALS byte v, nv, n, o, d, dd, ret, stv, lst, walked; bit hres, took, got, cas, rcbusy, sawod, fast

/* A thread (a process of the region) that locks the PI mutex `cycles`
 * times, glibc's way: CAS(&W, 0, tid) in user space, else LOCK_PI (or
 * TRYLOCK_PI); with the lock, FUTEX_OWNER_DIED taken note of and cleared
 * (glibc: atomic_and(&lock, ~FUTEX_OWNER_DIED), EOWNERDEAD); the critical
 * section; CAS(&W, tid, 0) in user space, else UNLOCK_PI.  timed: its lock
 * may time out; maydie: it may die (SIGKILL) in its critical section, 2:
 * it must, its first time (with -DEXIT_WALK the death is a thread's exit
 * that walks its own robust list first: src/robust.c pf_robust_exit, the
 * private table's case); late: it starts after a death; trylk: a
 * trylock. */
proctype locker(byte t; bit timed; byte maydie; bit late; bit trylk; byte cycles)
{
  LOCALS;
  byte cyc;
  if :: late -> deaths > 0 :: else fi;
  do
  :: cyc < cycles ->
  atomic {                                           /* user space: CAS(&W, 0, tid) */
    if :: W == 0 -> W = t; ret = R_OK; got = 1 :: else -> got = 0 fi
  }
  if
  :: !got -> emu_pi(t, timed, trylk)                 /* pfutex(FUTEX_LOCK_PI / TRYLOCK_PI) */
  :: else
  fi;
  got = 0;
  if
  :: ret == R_OK ->
     atomic {
       /* a lock returns 0 only when the word names the caller */
       assert((W & TIDM) == t);
       assert(st[t] == IDLE);
       /* OWNER_DIED reaches one new owner per death */
       if :: (W & OD) -> sawod = 1; od_seen++; assert(od_seen <= deaths) :: else fi;
#ifdef WITNESS
       if :: sawod && walked -> WIT(5) skip :: else fi;   /* after ESRCH and the retry */
       if :: sawod && timed -> WIT(13) skip :: else fi;   /* the timed locker got it from the dead */
       if :: trylk -> WIT(14) skip :: else fi;            /* a trylock took it */
       if :: cyc > 0 && !got -> WIT(15) skip :: else fi   /* a second cycle through LOCK_PI */
#endif
       skip
     }
     if :: sawod -> W = W & ~OD; sawod = 0 :: else fi;   /* glibc: atomic_and(&lock, ~FUTEX_OWNER_DIED) */
     atomic { assert(incs == 0); incs++; holder = t };   /* the critical section */
     if
     :: maydie != 0 && deaths == 0 ->                /* the owner dies, the lock held (once) */
#ifndef EXIT_WALK
        atomic { incs--; holder = 0; alive[t] = 0; deaths++; g_done++ };   /* SIGKILL */
#else
        atomic { incs--; holder = 0; deaths++ };     /* pthread_exit: the key destructor */
        robust_word_died(t, t);                      /*   pf_robust_exit: pf_robust_walk */
        atomic { alive[t] = 0; g_done++ };           /* the thread is gone */
#endif
        goto died
     :: maydie != 2 || deaths > 0                    /* (2: it must die) */
     fi;
     atomic { assert((W & TIDM) == t); incs--; holder = 0 };
     atomic {                                        /* user space: CAS(&W, tid, 0) */
       if :: W == t -> W = 0; got = 1 :: else -> got = 0 fi
     }
     if
     :: !got -> unlock_pi(t)                         /* pfutex(FUTEX_UNLOCK_PI) */
     :: else
     fi;
     got = 0
  :: ret == R_ESRCH ->
     /* a dead owner, nobody queued, the word not freed by a walk */
     atomic {
       g_esrch++;
       assert(deaths > 0);
#if defined(ROBUST) || defined(EXIT_WALK)
#if defined(STRICT_ESRCH) || defined(EXIT_WALK)
       assert(false);                                /* the kernel's: never with a robust list */
#else
       assert(rcbusy);                               /* only while another's walk was in progress */
#endif
#endif
       skip
     }
  :: ret == R_ETIMEDOUT ->
     atomic {                                        /* a timed-out lock: not the owner, */
       assert(timed && st[t] == IDLE && (W & TIDM) != t);   /* IDLE, on no queue */
       assert(q[0] != t && q[1] != t && q[2] != t);
       g_timedout++
     }
  :: ret == R_EAGAIN -> assert(trylk)
  fi;
  ret = R_NONE; rcbusy = 0; walked = 0;
  cyc++
  :: else -> break
  od;
  g_done++;
died:
  skip
}

#ifdef ROBUST
/* A survivor of the region that walks dead processes' robust lists at
 * some point after the death (a region waiter's slice end, or a
 * scavenge: pf_region_robust_check), or never (it runs last). */
proctype walker()
{
  LOCALS;
end_walker:
  deaths > 0;
  robust_check(WALKER);
  g_wdone = 1
}
#endif

/* The invariants, checked in every state (the monitor's one step can be
 * taken in any of them). */
proctype monitor()
{
  assert(incs <= 1                                   /* mutual exclusion */
         && (holder == 0 || (W & TIDM) == holder)    /* the word names the live holder */
#ifndef NO_QUEUE_INVARIANT
         /* a queued locker: the word held, FUTEX_WAITERS set (a free
          * word or a clear bit with a locker queued is a lost hand-off) */
         && (qn == 0 || ((W & WAITERS) != 0 && (W & TIDM) != 0))
#endif
        )
}

/* ---- configurations ------------------------------------------------------------------ */
#ifndef C1
#define C1 2              /* CFG_PI: locker 1's cycles */
#endif
#ifndef C2
#define C2 1              /* CFG_DEAD: locker 2's cycles */
#endif
#if defined(CFG_PI) || defined(CFG_DEAD)
#define NPROC 3
#elif defined(CFG_LATE)
#define NPROC 3
#endif

init {
  atomic {
    alive[1] = 1; alive[2] = 1; alive[3] = 1; alive[WALKER] = 1;
#ifdef ROBUST
    regst = RROBUST; regown = 1; regtid = 1;          /* locker 1's robust list, registered in the region */
#endif
#if defined(CFG_PI)
    /* no death: two untimed lockers, and a timed locker or a trylocker */
    run locker(1, 0, 0, 0, 0, C1);
    run locker(2, 0, 0, 0, 0, 1);
    if :: run locker(3, 1, 0, 0, 0, 1) :: run locker(3, 0, 0, 0, 1, 1) fi;
#elif defined(CFG_DEAD)
    /* locker 1 may die holding the lock; an untimed locker, and a timed
     * locker or a trylocker */
    run locker(1, 0, 1, 0, 0, 1);
    run locker(2, 0, 0, 0, 0, C2);
    if :: run locker(3, 1, 0, 0, 0, 1) :: run locker(3, 0, 0, 0, 1, 1) fi;
#ifdef ROBUST
    run walker();
#endif
#elif defined(CFG_LATE)
    /* locker 1 takes the lock and dies holding it; then, nobody queued,
     * a locker and a locker or a trylocker arrive */
    run locker(1, 0, 2, 0, 0, 1);
    run locker(2, 0, 0, 1, 0, 1);
    if :: run locker(3, 0, 0, 1, 0, 1) :: run locker(3, 0, 0, 1, 1, 1) fi;
#ifdef ROBUST
#ifdef WALKER_TOO
    run walker();
#endif
#endif
#else
#error "no configuration: -DCFG_PI, CFG_DEAD or CFG_LATE"
#endif
    run monitor()
  }
  /* the end: every locker finished or died (one stuck in a park or on the
   * bucket lock is an invalid end state: a lost hand-off) */
#if defined(ROBUST) && (defined(CFG_DEAD) || defined(WALKER_TOO))
  g_done == NPROC && (deaths == 0 || g_wdone);       /* after a death the walker walks */
#else
  g_done == NPROC;
#endif
  assert(lk == 0 && qn == 0 && waiters == 0);       /* counts back to 0 */
  assert(st[1] == IDLE && st[2] == IDLE && st[3] == IDLE);
  assert(incs == 0);
  if
  :: deaths == 0 ->
     assert(W == 0 && od_seen == 0 && g_esrch == 0)  /* free; no OWNER_DIED, no ESRCH */
  :: deaths > 0 && (W & TIDM) == 0 ->
     /* recovered: one new owner saw OWNER_DIED (the word, free, may keep
      * a WAITERS and an OWNER_DIED bit only if no one took it since) */
     assert(od_seen == deaths || (od_seen == 0 && (W & OD) != 0 && g_walks > 0));
     assert(W == 0 || (W & OD) != 0)
  :: deaths > 0 && (W & TIDM) != 0 ->
     /* not recovered (no locker queued at the death, no walk): the word
      * still names the dead owner, and nobody got it */
     assert(!alive[W & TIDM] && od_seen == 0)
  fi;
#if defined(ROBUST) && (defined(CFG_DEAD) || defined(CFG_LATE))
  assert(deaths == 0 || (W & TIDM) == 0);           /* a robust owner's death: the word recovered */
#endif
#if defined(CFG_LATE) && !defined(ROBUST) && !defined(EXIT_WALK)
  assert(g_esrch == 2);                              /* no walk: both late lockers get ESRCH */
#endif
#ifdef EXIT_WALK
  assert(g_esrch == 0 && (W & TIDM) == 0);          /* the exit's walk: never ESRCH, the word freed */
#endif
#if defined(ROBUST) && defined(CFG_DEAD)
  assert(deaths == 0 || g_walks <= 1)                /* one walk per death */
#endif
}
