/* vxmove.pml - a Promela model of a futex_waitv member moved to a word of
 * another table (src/waitv.c (M), src/requeue.c), with a signal handler
 * of the waitv's thread that calls pfutex (src/thread.c (G),
 * pf_vx_detach).  Checked exhaustively by Spin (model/check.sh, `make
 * check-model`); model/README says what it covers and what it leaves out.
 *
 * The cast: the waitv (W: one member m1 on word A of table 1, its parker
 * P, src/waitv.c pf_vx_once), a requeuer (R: CMP_REQUEUE A -> B, word B of
 * table 2, src/requeue.c pf_xmove_pub_locked and pf_vx_ring_locked), a
 * waker (K: maybe a wake of A before the move, then a wake of B after it,
 * and of A if B had nobody), and the handler (H: runs once, at any step of
 * W outside its critical sections, while the waitv is set up).
 *
 * Properties (assertions and Spin's invalid end states):
 *   - every wake that counted the member is the waitv's result, and the
 *     waitv returns an index only when a wake counted it (the monitor at
 *     the end; nobody dies, so no spurious end: `spurious` stays 0);
 *   - nobody is left asleep: W parked or collecting a token nobody will
 *     give is an invalid end state (a lost wakeup, a lost token);
 *   - a waitv a handler detached never sleeps again: W never parks with
 *     vx_intr set, its parker armed and no token given (the explorer's
 *     check, tests/sched), and a token the detach gave is never lost (W
 *     would sleep for good: an invalid end state).
 *
 * Memory model: sequentially consistent; each access to what another
 * process reads or writes without the same lock is a step of its own.
 *
 * Bug flags (each must make Spin report an error, model/check.sh):
 *   BUG_VX_NO_RING     the requeuer does not ring the member's parker
 *   BUG_VX_NO_RESCAN   no second look at the members after re-arming
 *   BUG_VX_NO_OLDLOCK  the follower does not wait for the old bucket's lock
 *   BUG_VX_INTR_LATE   vx_intr looked at before re-arming, not after (before
 *                      15060d6)
 *   BUG_VX_SURPLUS     the surplus token taken back without looking at the
 *                      state again (before 15060d6)
 * Configurations: HANDLER (the handler runs, or not), TIMED (the waitv's
 * park may end by its deadline at any time). */

/* emu.h: PF_W_IDLE, QUEUED, WAKING, DETACHED, GONE, MOVED */
#define IDLE 0
#define QUEUED 1
#define WAKING 2
#define DETACHED 3
#define GONE 4
#define MOVED 5

#define R_NONE 0
#define R_WOKEN 1
#define R_EINTR 2
#define R_ETIMEDOUT 3

byte L1, L2;            /* the bucket locks of A (table 1) and B (table 2): 0 free */
byte P = IDLE;          /* the waitv's parker (w->node) */
bit tok;                /* its park word (src/park_word.c: unpark stores 1) */
byte m1 = IDLE;         /* the member on A */
bit pub;                /* m1 names the node queued for it (published) */
byte n2 = IDLE;         /* that node, on B, PF_PI_VXADOPT until adopted */
bit named;              /* n2 names the waitv's parker: adopted */
bit vx_intr;            /* w->vx_intr: a handler's call detached the waitv */
bit in_wait;            /* the waitv is set up (vx_n set) and not ending */
bit crit;               /* W in a critical section: signals blocked */
bit ready, moved_done, k_done, w_done;
byte counted;           /* members the wakes counted */
byte res = R_NONE;      /* the waitv's result */
bit spurious;           /* a member found out of reach (only if someone died) */

#define LOCK(l, me)     atomic { l == 0 -> l = me }
#define UNLOCK(l)       l = 0

/* pf_vx_ring_locked (a move) and pf_node_wake_locked's futex_waitv branch
 * (a wake): the parker QUEUED -> WAKING, the token given after the unlock */
inline ring(pending)
{
  atomic { if :: P == QUEUED -> P = WAKING; pending = 1 :: else -> skip fi }
}

/* ---- the requeuer: CMP_REQUEUE(A -> B, nr_wake 0, nr_requeue 1) ---------- */
active proctype R()
{
  bit pend = 0;
  ready;
  LOCK(L1, 2);
  LOCK(L2, 2);
  if
  :: m1 == QUEUED ->
     m1 = MOVED;           /* off A's queue */
     n2 = QUEUED;          /* queued and counted on B, not armed (PF_PI_VXADOPT) */
     pub = 1;              /* published in the node it leaves */
#ifndef BUG_VX_NO_RING
     ring(pend)
#endif
  :: else -> skip
  fi;
  UNLOCK(L2);
  UNLOCK(L1);
  if :: pend -> tok = 1 :: else -> skip fi;
  moved_done = 1
}

/* ---- the waker ------------------------------------------------------------ */
inline wake_a()
{
  LOCK(L1, 3);
  if :: m1 == QUEUED -> m1 = WAKING; counted++; ring(pend) :: else -> skip fi;
  UNLOCK(L1);
  if :: pend -> tok = 1; pend = 0 :: else -> skip fi
}

active proctype K()
{
  bit pend = 0;
  ready;
  if
  :: wake_a()              /* before the move, or racing it */
  :: skip
  fi;
  moved_done;
  LOCK(L2, 3);
  if
  :: n2 == QUEUED ->
     n2 = WAKING; counted++;
     if :: named -> ring(pend) :: else -> skip fi   /* not adopted: rings nothing */
  :: else -> skip
  fi;
  UNLOCK(L2);
  if :: pend -> tok = 1; pend = 0 :: else -> skip fi;
  if :: counted == 0 -> wake_a() :: else -> skip fi;
  k_done = 1
}

/* ---- the handler: a slow-path pfutex call on W's thread (pf_vx_detach) --- */
#ifdef HANDLER
active proctype H()
{
end_h:
  atomic {
    in_wait && !crit ->
    vx_intr = 1;
    if :: P == QUEUED -> P = DETACHED; tok = 1 :: else -> skip fi
  }
}
#endif

/* ---- the waitv ------------------------------------------------------------ */
/* pf_vx_scan_any: a member WAKING (with `moved`: or MOVED) */
#define SCAN0  (m1 == WAKING || (named && n2 == WAKING))
#define SCAN1  (SCAN0 || m1 == MOVED || (named && n2 == MOVED))

active proctype W()
{
  bit followed = 0, found = 0, moves = 0, n = 0, timedout = 0, t = 0;

  /* pf_vx_once's set-up: the parker armed, then (signals let in) the member
   * queued and its word read (it holds its value) */
  crit = 1;
  P = QUEUED;
  in_wait = 1;
  crit = 0;
  m1 = QUEUED;
  ready = 1;

  do
  :: /* pf_waiter_park: until the token (or the deadline) */
     atomic {
       /* a waitv a handler detached sleeps again with no token due (its
        * parker armed again: QUEUED) */
       assert(!(vx_intr && tok == 0 && P == QUEUED));
       if
       :: tok == 1 -> skip
#ifdef TIMED
       :: timedout = 1
#endif
       fi
     }
     if :: timedout -> break :: else -> skip fi;
     if
     :: P == WAKING ->
        /* pf_vx_settle: rung by a wake or by a move */
        do
        :: n = 0;
           if
           :: m1 == MOVED && !followed ->
              crit = 1;                      /* pf_vx_follow_all, in a critical section */
#ifndef BUG_VX_NO_OLDLOCK
              LOCK(L1, 1);                   /* its requeuer holds it until the move is done */
              UNLOCK(L1);
#endif
              if
              :: pub == 0 -> spurious = 1; found = 1   /* out of reach */
              :: else ->
                 LOCK(L2, 1);
                 if
                 :: n2 == QUEUED -> named = 1; moves = 1   /* adopted: names P */
                 :: n2 == WAKING -> found = 1              /* woken before it came */
                 :: else -> assert(false)
                 fi;
                 UNLOCK(L2)
              fi;
              m1 = IDLE;                     /* the old node given back (pf_vx_drop) */
              followed = 1;
              n = 1;
              crit = 0
           :: else -> skip
           fi;
           if
           :: found -> break
           :: n == 0 && !moves -> break      /* no move: a wake, or detached */
           :: else -> skip
           fi;
           if
           :: SCAN0 || P == DETACHED -> break
           :: else -> skip
           fi;
#ifdef BUG_VX_INTR_LATE
           if :: vx_intr -> break :: else -> skip fi;   /* only before re-arming */
#endif
           /* rung by moves only: armed again (its token collected first) */
           if
           :: P == WAKING -> tok == 1; P = QUEUED
           :: else -> skip
           fi;
#ifndef BUG_VX_INTR_LATE
           if :: vx_intr -> break :: else -> skip fi;   /* a handler before or during it */
#endif
#ifndef BUG_VX_NO_RESCAN
           if
           :: SCAN1 -> skip                  /* looked at again */
           :: else -> goto park_again
           fi
#else
           goto park_again
#endif
        od;
        break
     :: P != WAKING && P != QUEUED -> break  /* detached */
     :: P == QUEUED ->
        /* a surplus token (a re-arming left it): taken back; then the
         * state again, and given back if a ring or a detach came */
        t = tok;
        atomic { if :: t == 1 && tok == 1 -> tok = 0 :: else -> t = 0 fi }
#ifndef BUG_VX_SURPLUS
        if :: t == 1 && P != QUEUED -> tok = 1 :: else -> skip fi
#endif
     fi;
park_again:
     skip
  od;

  /* pf_vx_end: signals blocked; the members taken off (a MOVED one
   * followed in ending mode); the parker disarmed */
  crit = 1;
  in_wait = 0;
end_m1:
  if
  :: m1 == MOVED && !followed ->
#ifndef BUG_VX_NO_OLDLOCK
     LOCK(L1, 1);
     UNLOCK(L1);
#endif
     if
     :: pub == 0 -> spurious = 1; found = 1      /* out of reach */
     :: else ->
        LOCK(L2, 1);
        if :: n2 == QUEUED -> n2 = GONE :: n2 == WAKING -> found = 1 :: else -> skip fi;
        UNLOCK(L2)
     fi;
     m1 = IDLE;
     followed = 1
  :: else ->
     LOCK(L1, 1);
     if
     :: m1 == QUEUED -> m1 = GONE
     :: m1 == WAKING -> found = 1
     :: m1 == MOVED && !followed -> UNLOCK(L1); goto end_m1   /* moved meanwhile */
     :: else -> skip
     fi;
     UNLOCK(L1)
  fi;
  if
  :: named ->
     LOCK(L2, 1);
     if :: n2 == QUEUED -> n2 = GONE :: n2 == WAKING -> found = 1 :: else -> skip fi;
     UNLOCK(L2)
  :: else -> skip
  fi;
  /* pf_vx_disarm: QUEUED -> GONE, else the token due collected */
  atomic { if :: P == QUEUED -> P = GONE :: else -> skip fi }
  if :: P == WAKING || P == DETACHED -> tok == 1 :: else -> skip fi;
  P = IDLE;
  crit = 0;
  if
  :: found -> res = R_WOKEN
  :: !found && timedout -> res = R_ETIMEDOUT
  :: else -> res = R_EINTR
  fi;
  w_done = 1
}

/* ---- the end: counts exact, nobody spurious ------------------------------ */
active proctype M()
{
  w_done && k_done && moved_done;
  assert(!spurious);
  assert((counted == 1) == (res == R_WOKEN));
  assert(counted <= 1);
#ifndef HANDLER
#ifndef TIMED
  assert(res == R_WOKEN);                    /* nothing else ends it */
#endif
#endif
}
