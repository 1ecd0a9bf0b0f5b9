#!/bin/sh
# model/check.sh - verify model/pfutex.pml, model/pi.pml and model/vxmove.pml with Spin
# (`make check-model`).
#
# Every configuration of the unflagged model must verify without error
# (exhaustive: no bitstate, no depth truncation); every bug flag must make
# Spin report an error, which proves the harness can fail.  Exit 0 when all
# hold, 1 otherwise, 77 (skipped) when spin or a C compiler is missing.
#
# Usage: check.sh [SRCDIR [WORKDIR]]   (env: SPIN, CC, PF_MODEL_MEMLIM in MB)
srcdir=${1:-`dirname "$0"`}
work=${2:-model-check}
SPIN=${SPIN:-spin}
CC=${CC:-cc}
memlim=${PF_MODEL_MEMLIM:-2048}

if ! command -v "$SPIN" >/dev/null 2>&1; then
  echo "check-model: SKIP: no spin (Debian: apt-get install spin)"
  exit 77
fi
if ! command -v "$CC" >/dev/null 2>&1; then
  echo "check-model: SKIP: no C compiler ($CC) for Spin's verifiers"
  exit 77
fi
mdir=`cd "$srcdir" && pwd`
model=pfutex.pml                    # the model verify runs (pi.pml: the PI ops)
mkdir -p "$work" || exit 1
: > "$work/results.txt"
fail=0

# verify NAME EXPECT DEFINES...: EXPECT is ok (no error) or error.  The
# variable pancc adds flags to the verifier's compile (e.g. -DCOLLAPSE).
pancc=
verify() {
  verify_one "$@" | tee -a "$work/results.txt"
  case `tail -1 "$work/results.txt"` in FAIL:*) fail=1 ;; esac
}
verify_one() {
  name=$1; expect=$2; shift 2
  d=$work/$name
  rm -rf "$d"; mkdir -p "$d"
  cp "$mdir/$model" "$d/$model"
  start=`date +%s`
  if ! (cd "$d" && "$SPIN" -a "$@" $model >spin.log 2>&1 \
        && $CC -O2 -DSAFETY -DMEMLIM=$memlim $pancc -o pan pan.c >cc.log 2>&1); then
    echo "FAIL: $name: spin -a or the compile failed (see $d)"
    fail=1
    return
  fi
  (cd "$d" && ./pan -m100000 >pan.log 2>&1)
  end=`date +%s`
  errs=`sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$d/pan.log"`
  stored=`sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$d/pan.log"`
  trans=`sed -n 's/^ *\([0-9.e+]*\) transitions.*/\1/p' "$d/pan.log"`
  depth=`sed -n 's/.*depth reached \([0-9]*\).*/\1/p' "$d/pan.log"`
  what=`grep -m1 '^pan:[0-9]' "$d/pan.log"`
  # An exhaustive run must not be cut short (memory, depth).
  if grep -q 'max search depth too small\|out of memory\|aborting' "$d/pan.log"; then
    echo "FAIL: $name: the search was cut short (see $d/pan.log)"
    fail=1
    return
  fi
  info="states $stored, transitions $trans, depth $depth, `expr $end - $start` s"
  case $expect:$errs in
    ok:0)     echo "PASS: $name ($*${pancc:+; cc $pancc}): no error; $info" ;;
    error:0)  echo "FAIL: $name ($*): Spin found no error, expected one; $info"; fail=1 ;;
    error:[1-9]*)
      (cd "$d" && "$SPIN" -t -p "$@" $model >trail.txt 2>&1)
      echo "PASS: $name ($*): error found as expected: $what; trail in $d/trail.txt" ;;
    *)        echo "FAIL: $name ($*): ${what:-no result} (see $d/pan.log)"; fail=1 ;;
  esac
}

# The code as it is: every configuration verifies.
verify wake ok -DCFG_WAKE
verify req ok -DCFG_REQ
verify req-same ok -DCFG_REQ -DSAMEBUCKET
verify req2 ok -DCFG_REQ2
verify reqwake ok -DCFG_REQWAKE
verify wakeop ok -DCFG_WAKEOP
verify wakeop-same ok -DCFG_WAKEOP -DSAMEBUCKET
verify handler ok -DCFG_HANDLER
verify region ok -DCFG_REGION
# two deaths (7.4M states: collapse compression keeps it near 450 MB)
pancc=-DCOLLAPSE
verify region-k2 ok -DCFG_REGION -DKILLS=2
pancc=
verify free ok -DCFG_FREE
# futex_waitv (src/waitv.c): two private words vs two wakes, a requeue and
# a wake, a wake_op
verify waitv ok -DCFG_WAITV
verify waitv-same ok -DCFG_WAITV -DSAMEBUCKET
verify waitvreq ok -DCFG_WAITVREQ
verify waitvreq-same ok -DCFG_WAITVREQ -DSAMEBUCKET
verify waitvop ok -DCFG_WAITVOP
verify waitv2 ok -DCFG_WAITV2
verify waitv2-same ok -DCFG_WAITV2 -DSAMEBUCKET
verify waitv2b ok -DCFG_WAITV2B
# The bugs: each must be found.
verify bug-no-c error -DCFG_REQWAKE -DBUG_NO_C
verify bug-no-b error -DCFG_WAKE -DBUG_NO_B
verify bug-touch error -DCFG_WAKE -DBUG_TOUCH
verify bug-lost-req-wake error -DCFG_REQ -DBUG_LOST_REQ_WAKE
# the lost wakeup of issue 17 (requeue drained its source bucket twice)
verify bug-double-drain error -DCFG_REQ -DBUG_DOUBLE_DRAIN
# (G) a waker that counts a node its owner's handler detached
verify bug-wake-detached error -DCFG_HANDLER -DBUG_WAKE_DETACHED
# (G) a detach without the bucket lock (a CAS on the state)
verify bug-detach-nolock error -DCFG_HANDLER -DBUG_DETACH_NOLOCK
# (R) a waker that counts a dead process's slot; a dead holder's lock kept
verify bug-count-dead error -DCFG_REGION -DBUG_COUNT_DEAD
verify bug-no-takeover error -DCFG_REGION -DBUG_NO_TAKEOVER
# (R) a dead slot freed while its push is on the incoming stack (the code
# before d5ee46a), by the walk and by the rebuild: each fix is needed
verify bug-walk-on-stack error -DCFG_REGION -DKILLS=2 -DBUG_WALK_ON_STACK
verify bug-rebuild-on-stack error -DCFG_REGION -DKILLS=2 -DBUG_REBUILD_ON_STACK
# (R) pf_slot_free writing a dead slot's fields before taking it (before 0185bf9)
verify bug-free-order error -DCFG_FREE -DBUG_FREE_ORDER
# (waitv) the parker rung without its CAS; armed after the members queued;
# its due token not collected; a member counted only if it rang the parker
verify bug-vx-no-cas error -DCFG_WAITV -DBUG_VX_NO_CAS
verify bug-vx-arm-late error -DCFG_WAITV -DBUG_VX_ARM_LATE
verify bug-vx-no-collect error -DCFG_WAITV -DBUG_VX_NO_COLLECT
verify bug-vx-count-rung error -DCFG_WAITVOP -DBUG_VX_COUNT_RUNG
verify bug-vx2-no-poll error -DCFG_WAITV2B -DBUG_VX2_NO_POLL
verify bug-vx2-no-disarm2 error -DCFG_WAITV2 -DBUG_VX2_NO_DISARM2

# model/pi.pml: the PI ops (src/pi.c) and the hand-off on owner death
model=pi.pml
verify pi ok -DCFG_PI
verify pi-dead ok -DCFG_DEAD -DC2=2
verify pi-dead-exit ok -DCFG_DEAD -DEXIT_WALK -DC2=2
verify pi-dead-robust ok -DCFG_DEAD -DROBUST -DSTRICT_ESRCH
pancc=-DCOLLAPSE
verify pi-dead-robust-c2 ok -DCFG_DEAD -DROBUST -DSTRICT_ESRCH -DC2=2
pancc=
verify pi-late ok -DCFG_LATE
verify pi-late-exit ok -DCFG_LATE -DEXIT_WALK
verify pi-late-robust ok -DCFG_LATE -DROBUST -DWALKER_TOO -DSTRICT_ESRCH
# the bugs: each must be found
verify bug-pi-unlock-no-top error -DCFG_PI -DBUG_PI_UNLOCK_NO_TOP
verify bug-pi-no-waiters-bit error -DCFG_PI -DBUG_PI_NO_WAITERS_BIT
verify bug-pi-double-handoff error -DCFG_DEAD -DROBUST -DBUG_PI_DOUBLE_HANDOFF
verify bug-pi-double-poll error -DCFG_DEAD -DBUG_PI_DOUBLE_HANDOFF
verify bug-pi-timeout-loses error -DCFG_PI -DBUG_PI_TIMEOUT_LOSES
verify bug-pi-handoff-no-od error -DCFG_DEAD -DBUG_PI_HANDOFF_NO_OD
verify bug-pi-no-poll error -DCFG_DEAD -DBUG_PI_NO_POLL
verify bug-pi-fast-unlock-any error -DCFG_PI -DBUG_PI_FAST_UNLOCK_ANY
# the code before pf_emu_pi's robust walk on ESRCH, and before its wait
# for another survivor's walk (the finding of this model: a locker answered
# ESRCH while that walk was in progress)
verify bug-pi-no-esrch-retry error -DCFG_LATE -DROBUST -DBUG_PI_NO_ESRCH_RETRY
verify bug-pi-no-walk-wait error -DCFG_LATE -DROBUST -DWALKER_TOO -DSTRICT_ESRCH -DBUG_PI_NO_WALK_WAIT

# model/vxmove.pml: a futex_waitv member moved to a word of another table
# (src/waitv.c (M)), a wake before or after, the deadline, a signal
# handler's pfutex call (vx_intr)
model=vxmove.pml
verify vxmove ok
verify vxmove-timed ok -DTIMED
verify vxmove-handler ok -DHANDLER
verify vxmove-handler-timed ok -DHANDLER -DTIMED
# the bugs: each must be found (the last two: the code before 15060d6)
verify bug-vx-no-ring error -DBUG_VX_NO_RING
verify bug-vx-no-rescan error -DBUG_VX_NO_RESCAN
verify bug-vx-no-oldlock error -DTIMED -DBUG_VX_NO_OLDLOCK
verify bug-vx-intr-late error -DHANDLER -DBUG_VX_INTR_LATE
verify bug-vx-surplus error -DHANDLER -DBUG_VX_SURPLUS
model=pfutex.pml

npass=`grep -c '^PASS: ' "$work/results.txt"`
nfail=`grep -c '^FAIL: ' "$work/results.txt"`
echo "check-model: $npass passed, $nfail failed"
exit $fail
