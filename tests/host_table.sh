#!/bin/sh
# host_table.sh - configure's host table (build-aux/host-table.sh) for a list
# of host triplets: each is canonicalised by config.sub as configure does
# (AC_CANONICAL_HOST), its OS part goes through pf_host_table, and the
# native backend, host family and ports it picks are compared with the
# expected row.  Then --with-ports= overrides, and this build's own
# selection (PF_TEST_BACKENDS_CONFIGURED/PF_TEST_HOST from make) against the
# table.  TAP; runs under `make check` and under `prove tests/host_table.sh`.
top=${srcdir:-`dirname "$0"`/..}
. "$top/build-aux/host-table.sh" || { echo "Bail out! cannot read $top/build-aux/host-table.sh"; exit 1; }

n=0
failed=0
ok () {        # ok COND-STATUS DESCRIPTION
  n=`expr $n + 1`
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
}

# triplet | native | family | ports (best first)
rows='
x86_64-unknown-freebsd14     none  freebsd   freebsd sysv
aarch64-unknown-freebsd13.2  none  freebsd   freebsd sysv
x86_64-unknown-dragonfly     none  dragonfly dragonfly sysv
x86_64-unknown-openbsd7      none  openbsd   openbsd sysv
sparc64-unknown-openbsd7.4   none  openbsd   openbsd sysv
x86_64-unknown-netbsd10      none  netbsd    netbsd sysv
aarch64-apple-darwin         none  darwin    darwin sysv
x86_64-apple-darwin23        none  darwin    darwin sysv
x86_64-w64-mingw32           none  win32     win32
i686-w64-mingw32             none  win32     win32
x86_64-pc-cygwin             none  posix     sysv
x86_64-pc-linux-gnu          linux linux     futex sysv
aarch64-linux-gnu            linux linux     futex sysv
armv7-unknown-linux-gnueabihf linux linux    futex sysv
x86_64-unknown-linux-musl    linux linux     futex sysv
aarch64-linux-android        linux linux     futex sysv
x86_64-pc-solaris2.11        none  posix     sysv
powerpc-ibm-aix7.2           none  posix     sysv
'
nrows=`echo "$rows" | grep -c .`
# 1 per row, 7 override cases, 1 for this build
echo "1..`expr $nrows + 8`"

while read triplet native family ports; do
  [ -n "$triplet" ] || continue
  canon=`${SHELL:-sh} "$top/build-aux/config.sub" "$triplet" 2>/dev/null`
  os=`echo "$canon" | sed 's/^[^-]*-[^-]*-//'`
  pf_host_table "$os"
  got="$pf_native $pf_host_family $pf_ports"
  want="$native $family $ports"
  [ -n "$canon" ] && [ "$got" = "$want" ]
  ok $? "$triplet (host_os $os): native $pf_native, family $pf_host_family, ports '$pf_ports' (want '$ports')"
done <<ROWS
$rows
ROWS

# --with-ports= overrides: ports the host can build, in the order given;
# "no"; a port of another OS or an unknown one is an error naming it.
pf_host_table freebsd14
pf_ports_resolve "sysv"; ok $? "freebsd --with-ports=sysv: accepted"
[ "$pf_ports" = "sysv" ]; ok $? "freebsd --with-ports=sysv: ports '$pf_ports'"
pf_host_table freebsd14
pf_ports_resolve "sysv,freebsd"; r=$?
[ $r -eq 0 ] && [ "$pf_ports" = "sysv freebsd" ]; ok $? "freebsd --with-ports=sysv,freebsd: '$pf_ports' (order kept, so sysv is the default)"
pf_host_table freebsd14
pf_ports_resolve "futex"; r=$?
[ $r -ne 0 ] && echo "$pf_ports_error" | grep -q "futex port cannot be built for freebsd"
ok $? "freebsd --with-ports=futex: refused ($pf_ports_error)"
pf_host_table mingw32
pf_ports_resolve "win32 sysv"; r=$?
[ $r -ne 0 ] && echo "$pf_ports_error" | grep -q "sysv port cannot be built for win32"
ok $? "mingw32 --with-ports='win32 sysv': refused ($pf_ports_error)"
pf_host_table linux-gnu
pf_ports_resolve "no"; r=$?
[ $r -eq 0 ] && [ -z "$pf_ports" ]; ok $? "linux --with-ports=no: no ports"
pf_host_table linux-gnu
pf_ports_resolve "umtx"; r=$?
[ $r -ne 0 ] && echo "$pf_ports_error" | grep -q "unknown port 'umtx'"
ok $? "linux --with-ports=umtx: refused ($pf_ports_error)"

# This build: configure's backends are the table's for its host (unless
# --with-ports or --disable-native changed them, which the wrapper says).
if [ -z "${PF_TEST_HOST_OS:-}" ]; then
  echo "ok `expr $n + 1` # SKIP not run by make check (PF_TEST_HOST_OS unset)"
else
  pf_host_table "$PF_TEST_HOST_OS"
  want=
  [ "$pf_native" = none ] || want=$pf_native
  for p in $pf_ports; do want="$want emu:$p"; done
  want=`echo $want`
  got=`echo "$PF_TEST_PORTS_BACKENDS"`
  if [ -n "${PF_TEST_PORTS_OVERRIDDEN:-}" ]; then
    echo "ok `expr $n + 1` # SKIP this build overrode the table ($PF_TEST_PORTS_OVERRIDDEN)"
  else
    [ "$got" = "$want" ]
    ok $? "this build (host_os $PF_TEST_HOST_OS): backends '$got', the table's '$want'"
  fi
fi
exit 0
