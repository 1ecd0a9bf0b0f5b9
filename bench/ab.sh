#!/bin/sh
# ab.sh - two builds of pfbench side by side: the same workloads under the
# same backends, K interleaved rounds (A B A B ...), median per build and
# the ratio B/A measured in the same run (the machines are shared and
# noisy: absolute figures drift, interleaved ratios much less).
#   ab.sh A/pfbench B/pfbench [-k K] [-d MS] [-b "BACKENDS"] [CONFIG...]
# A CONFIG is "workload|pfbench options"; by default the regions' rows:
# the cross-process fast paths and ping-pong (-x: words in a region).
set -u
A=${1:?usage: ab.sh A/pfbench B/pfbench [-k K] [-d MS] [-b BACKENDS] [CONFIG...]}
B=${2:?usage: ab.sh A/pfbench B/pfbench [-k K] [-d MS] [-b BACKENDS] [CONFIG...]}
shift 2
K=7 D=200 BACKENDS=
while [ $# -gt 0 ]; do
  case $1 in
    -k) K=$2; shift ;;
    -d) D=$2; shift ;;
    -b) BACKENDS=$2; shift ;;
    *) break ;;
  esac
  shift
done
[ -n "$BACKENDS" ] || BACKENDS=$("$B" --backends) || exit 1
if [ $# -gt 0 ]; then
  CONFIGS=$(printf '%s\n' "$@")
else
  CONFIGS="hash|-t 1 -x
wake-none|-t 1 -x
pp|-a same -x
pp|-a same -x -s"
fi
field() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "ab.sh: A=$A B=$B, K=$K interleaved rounds, -d $D ms"
printf '%-10s %-16s %-14s %14s %14s %-10s %8s\n' workload params backend A B unit B/A
echo "$CONFIGS" | while IFS='|' read -r wl params; do
  for be in $BACKENDS; do
    ta= tb= unit=
    k=0
    while [ $k -lt "$K" ]; do
      # shellcheck disable=SC2086
      la=$(PFUTEX_BACKEND=$be "$A" "$wl" $params -d "$D" 2>/dev/null)
      # shellcheck disable=SC2086
      lb=$(PFUTEX_BACKEND=$be "$B" "$wl" $params -d "$D" 2>/dev/null)
      ta="$ta $(field value "$la")"
      tb="$tb $(field value "$lb")"
      unit=$(field unit "$lb")
      k=$((k + 1))
    done
    ma=$(printf '%s\n' $ta | grep . | median)
    mb=$(printf '%s\n' $tb | grep . | median)
    r=$(awk -v a="$ma" -v b="$mb" 'BEGIN { if (a > 0) printf "%.3f", b / a; else print "-" }')
    printf '%-10s %-16s %-14s %14s %14s %-10s %8s\n' "$wl" "$params" "$be" "$ma" "$mb" "$unit" "$r"
  done
done
