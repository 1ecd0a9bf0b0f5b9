#!/bin/sh
# perf-check.sh - pfbench's figures against `perf bench futex` (Debian
# linux-perf) on the same machine: pfbench under PFUTEX_BACKEND=linux:futex
# (the futex(2) call perf makes; linux:futex2 would requeue through
# futex_requeue(2)), with
# perf's method (-P) for wake, requeue and wake-parallel, and perf itself,
# K interleaved rounds each, medians, ratio pfbench / perf.
#   perf-check.sh PATH/TO/pfbench [-k K]
# hash: perf reports the mean ops/s per thread, so pfbench's total is
# divided by the thread count; both pin their workers and call futex(2)'s
# FUTEX_WAIT (pfbench through the pfutex() multiplexer, -m).  Exit status 0 even when perf is missing
# (then it says so): this is a sanity check, not a test.
set -u
PFBENCH=${1:?usage: perf-check.sh PATH/TO/pfbench [-k K]}
shift
K=3
while [ $# -gt 0 ]; do
  case $1 in
    -k) K=$2; shift ;;
    --long) ;;            # accepted for `make bench-perf BENCH_FLAGS=--long`
    *) echo "perf-check.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if ! perf bench futex hash -h >/dev/null 2>&1 && ! perf bench futex 2>&1 | grep -q hash; then
  echo "perf-check.sh: 'perf bench futex' not available (Debian: apt-get install linux-perf)"
  exit 0
fi
if ! PFUTEX_BACKEND=linux:futex "$PFBENCH" --backends >/dev/null 2>&1 \
   || ! PFUTEX_BACKEND=linux:futex "$PFBENCH" hash -t 1 -d 10 >/dev/null 2>&1; then
  echo "perf-check.sh: no linux backend in this build"
  exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfcheck.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
field() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# name|perf arguments|pfbench arguments|unit|perf's summary pattern|divide pfbench by
CHECKS="hash -t 1|hash -t 1 -r 1|hash -t 1 -P -m -d 1000|ops/s per thread|Averaged|1
hash -t 2|hash -t 2 -r 1|hash -t 2 -P -m -d 1000|ops/s per thread|Averaged|2
wake -t 64|wake -t 64|wake -P -n 64 -r 10|ms|^Wokeup|1
requeue -t 64|requeue -t 64|requeue -P -n 64 -r 10|ms|^Requeued|1
wake-parallel -t 64 -w 2|wake-parallel -t 64 -w 2|wake-parallel -P -n 64 -w 2 -r 10|ms|^Avg per-thread|1"

echo "pfbench -P (PFUTEX_BACKEND=linux:futex) beside perf bench futex; medians of $K interleaved runs"
printf '%-26s %16s %16s %-18s %8s\n' check perf pfbench unit ratio
echo "$CHECKS" | while IFS='|' read -r name pargs bargs unit pat div; do
  : > "$tmp/p"; : > "$tmp/b"
  k=0
  while [ $k -lt "$K" ]; do
    # shellcheck disable=SC2086
    out=$(perf bench futex $pargs 2>&1)
    line=$(printf '%s\n' "$out" | grep -E "$pat" | grep -v '^\[Run' | tail -1)
    case $name in
      hash*) printf '%s\n' "$line" | sed -n 's/.*Averaged \([0-9]*\) operations.*/\1/p' >> "$tmp/p" ;;
      *) printf '%s\n' "$line" | sed -n 's/.* in \([0-9.]*\) ms.*/\1/p' >> "$tmp/p" ;;
    esac
    # shellcheck disable=SC2086
    bl=$(PFUTEX_BACKEND=linux:futex "$PFBENCH" $bargs 2>/dev/null)
    v=$(field value "$bl")
    if [ -n "$v" ]; then
      case $name in
        hash*) awk -v v="$v" -v d="$div" 'BEGIN { printf "%.0f\n", v / d }' >> "$tmp/b" ;;
        *) awk -v v="$v" 'BEGIN { printf "%.4f\n", v / 1000 }' >> "$tmp/b" ;;   # us -> ms
      esac
    fi
    k=$((k + 1))
  done
  pm=$(median < "$tmp/p"); bm=$(median < "$tmp/b")
  ratio=$(awk -v a="$bm" -v b="$pm" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }')
  printf '%-26s %16s %16s %-18s %8s\n' "$name" "$pm" "$bm" "$unit" "$ratio"
done
echo "(ratio = pfbench / perf; near 1.00 means the two agree)"
