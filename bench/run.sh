#!/bin/sh
# run.sh - drive pfbench: every workload under every backend, K interleaved
# rounds (A B C A B C ...), median per backend, ratio to the native backend
# measured in the same run.
#   run.sh PATH/TO/pfbench [--long] [-k K] [-d MS] [-b "BACKENDS"] [--only WL[,WL...]]
# --long: more thread/waiter counts, and bench/results.csv (+ bench/plot.png
# when gnuplot is installed) next to pfbench.
# -b: these backends (names as pfbench --backends prints them) instead of
# every compiled one; --only: just the configurations of these workloads
# (e.g. --only pi-uncontended,pi-handoff or --only waitv-mismatch,waitv-pp),
# the same interleaving and ratios.
# Peers, where the workload fits: peer_atomic (C++20 std::atomic wait/
# notify, libstdc++) and peer_boost (Boost.Atomic) beside pfbench join pp and
# wake-none; glibc's pthread_cond_broadcast/pthread_mutex ("glibc", pfbench
# -v glibc) joins the cond-perf requeue rows.
set -u
PFBENCH=${1:?usage: run.sh PATH/TO/pfbench [--long] [-k K] [-d MS] [-b BACKENDS] [--only WL[,WL...]]}
shift
LONG=no K=5 D=200 ONLY= BACKENDS=
while [ $# -gt 0 ]; do
  case $1 in
    --long) LONG=yes ;;
    -k) K=$2; shift ;;
    -d) D=$2; shift ;;
    -b) BACKENDS=$2; shift ;;
    --only) ONLY=$2; shift ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
dir=$(dirname "$PFBENCH")
PEER=$dir/peer_atomic
[ -x "$PEER" ] || PEER=
BOOST=$dir/peer_boost
[ -x "$BOOST" ] || BOOST=
[ -n "$BACKENDS" ] || BACKENDS=$("$PFBENCH" --backends) \
  || { echo "run.sh: $PFBENCH --backends failed" >&2; exit 1; }
NATIVE=
for b in $BACKENDS; do case $b in linux*) NATIVE=$b; break ;; esac; done

# Configurations: "workload|pfbench options"
SHORT="hash|-t 1
hash|-t 2
wake-none|-t 1
wake|-n 128
wake-parallel|-n 64 -w 2
requeue|-n 128
pp|-a same
pp|-a same -s
cond-perf|-n 50 -v wakeall
cond-perf|-n 50 -v requeue
hash|-t 1 -x
wake-none|-t 1 -x
pp|-a same -x
pi-uncontended|
pi-handoff|-a same
pi-handoff|
waitv-mismatch|
waitv-pp|-a same
waitv-pp|-n 64 -a same"
if [ "$LONG" = yes ]; then
  CONFIGS="$SHORT
hash|-t 4
hash|-t 8
hash|-t 1 -m
wake-none|-t 1 -m
wake|-n 64
wake|-n 512
wake-parallel|-n 128 -w 2
requeue|-n 64
requeue|-n 512
pp|
pp|-a split
pp|-t 2 -a same
cond-perf|-n 16 -v wakeall
cond-perf|-n 16 -v requeue
cond-perf|-n 200 -v wakeall
cond-perf|-n 200 -v requeue
pi-handoff|-a split
waitv-mismatch|-n 64
waitv-pp|
waitv-pp|-a split
waitv-pp|-n 64 -a split
waitv-pp|-a same -x
waitv-pp|-a same -2
requeue|-n 64 -x
requeue|-n 64 -2
requeue|-n 64 -2 -p"
else
  CONFIGS=$SHORT
fi
if [ -n "$ONLY" ]; then
  CONFIGS=$(printf '%s\n' "$CONFIGS" | awk -F'|' -v only="$ONLY" \
    'BEGIN { n = split(only, w, ","); for (i = 1; i <= n; i++) keep[w[i]] = 1 } $1 in keep')
  [ -n "$CONFIGS" ] || { echo "run.sh: --only $ONLY: no such workload" >&2; exit 2; }
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pfbench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
results=$tmp/results   # workload|params|backend-label|median|unit|ratio
handoffs=$tmp/handoffs # params|backend-label|cs|handoffs (pi-handoff, every run)
vwoken=$tmp/vwoken     # params|backend-label|rounds|woken (waitv-pp, every run)

field() {   # field KEY LINE
  printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

echo "pfbench: K=$K interleaved rounds, -d $D ms per run, backends: $(echo $BACKENDS)" \
     "${PEER:+std::atomic} ${BOOST:+boost::atomic} glibc"
echo "(ratios are to $NATIVE measured in the same run; medians of $K)"
printf '%-14s %-18s %-14s %14s %-12s %10s\n' workload params backend median unit "x native"

echo "$CONFIGS" | while IFS='|' read -r wl params; do
  runners=$BACKENDS
  case $wl in
    pp|wake-none)   # the peers are in-process only: not with -x (region words)
      case " $params " in *" -x "*) ;; *) runners="$runners ${PEER:+std::atomic} ${BOOST:+boost::atomic}" ;; esac ;;
    cond-perf) case $params in *requeue*) runners="$runners glibc" ;; esac ;;
  esac
  # the peers take pp's -t/-a/-d, not pfbench's -s (their own policy) or -m
  peer_params=$(echo "$params" | sed 's/ *-[sm]\b//g')
  glibc_params=$(echo "$params" | sed 's/-v requeue/-v glibc/')
  : > "$tmp/cur"
  k=0
  while [ $k -lt "$K" ]; do
    for b in $runners; do
      # shellcheck disable=SC2086
      if [ "$b" = std::atomic ]; then
        line=$("$PEER" "$wl" $peer_params -d "$D" 2>"$tmp/err")
      elif [ "$b" = boost::atomic ]; then
        line=$("$BOOST" "$wl" $peer_params -d "$D" 2>"$tmp/err")
      elif [ "$b" = glibc ]; then
        line=$("$PFBENCH" "$wl" $glibc_params -d "$D" 2>"$tmp/err")
      else
        line=$(PFUTEX_BACKEND=$b "$PFBENCH" "$wl" $params -d "$D" 2>"$tmp/err")
      fi
      v=$(field value "$line")
      if [ -n "$v" ]; then
        echo "$b $v $(field unit "$line") $(field backend "$line")" >> "$tmp/cur"
        h=$(field handoffs "$line")
        [ -z "$h" ] || echo "${params:--}|$(field backend "$line")|$(field cs "$line")|$h" >> "$handoffs"
        h=$(field woken "$line")
        [ -z "$h" ] || echo "${params:--}|$(field backend "$line")|$(field rounds "$line")|$h" >> "$vwoken"
      else
        echo "run.sh: $wl $params under $b failed: $(cat "$tmp/err")" >&2
      fi
    done
    k=$((k + 1))
  done
  nat=
  for b in $runners; do
    vals=$(awk -v b="$b" '$1 == b { print $2 }' "$tmp/cur" | sort -g)
    n=$(printf '%s\n' "$vals" | grep -c .)
    if [ "$n" -eq 0 ]; then
      printf '%-14s %-18s %-14s %14s\n' "$wl" "${params:--}" "$b" FAILED
      continue
    fi
    med=$(printf '%s\n' "$vals" | awk -v n="$n" '{ a[NR] = $1 } END { if (n % 2) print a[(n + 1) / 2]; else print (a[n / 2] + a[n / 2 + 1]) / 2 }')
    unit=$(awk -v b="$b" '$1 == b { print $3; exit }' "$tmp/cur")
    label=$(awk -v b="$b" '$1 == b { print $4; exit }' "$tmp/cur")
    [ "$b" = "$NATIVE" ] && nat=$med
    if [ -n "$nat" ]; then
      ratio=$(awk -v m="$med" -v n="$nat" 'BEGIN { printf "%.2f", m / n }')
    else
      ratio=-
    fi
    printf '%-14s %-18s %-14s %14s %-12s %10s\n' "$wl" "${params:--}" "$label" "$med" "$unit" "$ratio"
    echo "$wl|${params:--}|$label|$med|$unit|$ratio" >> "$results"
  done
done
echo "(ops_per_s, rounds_per_s: higher is better; us: lower is better)"

# Derived ratios, each within one backend, from the medians above.
if [ -s "$results" ]; then
  echo
  if grep -q '^hash|' "$results"; then
    echo "hash scaling (2 threads / 1 thread, distinct futexes):"
    awk -F'|' '$1 == "hash" && $2 == "-t 1" { one[$3] = $4 } $1 == "hash" && $2 == "-t 2" { two[$3] = $4 }
      END { for (b in one) if (b in two) printf "  %-14s %.2fx\n", b, two[b] / one[b] }' "$results" | sort
  fi
  if grep -q '^cond-perf|' "$results"; then
    echo "cond-perf (requeue broadcast rounds/s / wake-all rounds/s):"
    awk -F'|' '$1 == "cond-perf" { split($2, a, " "); n = a[2]
        if ($2 ~ /wakeall/) w[n "|" $3] = $4; else if ($2 ~ /requeue/) r[n "|" $3] = $4 }
      END { for (k in r) if (k in w) { split(k, p, "|"); printf "  n=%-4s %-14s %.2fx\n", p[1], p[2], r[k] / w[k] } }' \
      "$results" | sort
  fi
  if [ -s "$handoffs" ]; then
    echo "pi-handoff (unlocks that handed the lock over / locks taken, all $K runs):"
    awk -F'|' '{ h[$1 "|" $2] += $4; c[$1 "|" $2] += $3 }
      END { for (k in c) { split(k, p, "|"); printf "  %-18s %-14s %d / %d (%.2f%%)\n", p[1], p[2], h[k], c[k], 100 * h[k] / c[k] } }' \
      "$handoffs" | sort
  fi
  if [ -s "$vwoken" ]; then
    echo "waitv-pp (rounds whose waitv was woken, the rest EAGAIN / rounds, all $K runs):"
    awk -F'|' '{ h[$1 "|" $2] += $4; c[$1 "|" $2] += $3 }
      END { for (k in c) { split(k, p, "|"); printf "  %-18s %-14s %d / %d (%.2f%%)\n", p[1], p[2], h[k], c[k], 100 * h[k] / c[k] } }' \
      "$vwoken" | sort
  fi
fi

if [ "$LONG" = yes ] && [ -s "$results" ]; then
  csv=$dir/results.csv
  { echo "workload,params,backend,median,unit,ratio_to_native"
    tr '|' ',' < "$results"; } > "$csv"
  echo "wrote $csv"
  if command -v gnuplot >/dev/null 2>&1; then
    # one data file per (panel, backend): x = threads or waiters, y = median
    plots_hash= plots_wake= plots_req=
    for b in $(cut -d'|' -f3 "$results" | sort -u); do
      f=$(echo "$b" | tr ':/' '__')
      for p in hash wake requeue; do
        awk -F'|' -v w="$p" -v b="$b" '$1 == w && $3 == b && split($2, a, " ") == 2 { print a[2], $4 }' \
          "$results" | sort -n > "$tmp/$p.$f.dat"
        [ -s "$tmp/$p.$f.dat" ] || continue
        s="'$tmp/$p.$f.dat' using 1:2 with linespoints title '$b'"
        case $p in
          hash) plots_hash="${plots_hash:+$plots_hash, }$s" ;;
          wake) plots_wake="${plots_wake:+$plots_wake, }$s" ;;
          requeue) plots_req="${plots_req:+$plots_req, }$s" ;;
        esac
      done
    done
    gnuplot <<GP && echo "wrote $dir/plot.png"
set terminal png size 1500,450 noenhanced
set output '$dir/plot.png'
set multiplot layout 1,3 title 'pfbench (medians of $K, noisy 2-core machine: compare backends, not absolutes)'
set key top left
set logscale x 2
set title 'hash: ops/s vs threads'; set xlabel 'threads'; set ylabel 'ops/s'
plot $plots_hash
set title 'wake: us to wake all vs waiters'; set xlabel 'waiters'; set ylabel 'us'
plot $plots_wake
set title 'requeue: us per CMP_REQUEUE vs waiters'; set xlabel 'waiters'; set ylabel 'us'
plot $plots_req
unset multiplot
GP
  else
    echo "gnuplot not found: no plot"
  fi
fi
