#!/bin/sh
# model/check.sh - verify model/pfutex.pml with Spin (`make check-model`).
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
pml=`cd "$srcdir" && pwd`/pfutex.pml
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
  cp "$pml" "$d/pfutex.pml"
  start=`date +%s`
  if ! (cd "$d" && "$SPIN" -a "$@" pfutex.pml >spin.log 2>&1 \
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
      (cd "$d" && "$SPIN" -t -p "$@" pfutex.pml >trail.txt 2>&1)
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

npass=`grep -c '^PASS: ' "$work/results.txt"`
nfail=`grep -c '^FAIL: ' "$work/results.txt"`
echo "check-model: $npass passed, $nfail failed"
exit $fail
