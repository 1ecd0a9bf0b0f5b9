# host-table.sh - which backends a host gets.  Sourced by configure (and
# by tests/host_table.sh, which checks it for a list of triplets); plain
# POSIX sh, no configure macros.
#
# pf_host_table HOST_OS
#   sets pf_native (linux | none), pf_ports (the park ports the host has,
#   best first: the first is the default emulated backend), pf_host_family
#   (linux, freebsd, ..., win32, posix) and pf_regions_note (how regions
#   park there, for configure's summary).
# pf_ports_resolve LIST
#   the --with-ports= override: sets pf_ports from LIST ("yes": the table's;
#   "no": none; else a space or comma separated list), or pf_ports_error.

pf_host_table ()
{
  pf_native=none
  pf_regions_note=
  # One sorted case: the first pattern that matches wins.
  case $1 in
    *android* | linux*)
      pf_host_family=linux;     pf_native=linux; pf_ports="futex sysv" ;;
    cygwin* | msys*)
      pf_host_family=posix;     pf_ports="sysv" ;;
    darwin* | macos*)
      pf_host_family=darwin;    pf_ports="darwin sysv" ;;
    dragonfly*)
      pf_host_family=dragonfly; pf_ports="dragonfly sysv" ;;
    freebsd* | kfreebsd*)
      pf_host_family=freebsd;   pf_ports="freebsd sysv" ;;
    mingw* | windows* | pw32* | winnt*)
      pf_host_family=win32;     pf_ports="win32" ;;
    netbsd*)
      pf_host_family=netbsd;    pf_ports="netbsd sysv" ;;
    openbsd*)
      pf_host_family=openbsd;   pf_ports="openbsd sysv" ;;
    *)
      pf_host_family=posix;     pf_ports="sysv" ;;
  esac
  # How each port parks a region's (process-shared) waiter.
  case $pf_host_family in
    linux)     pf_regions_note="futex: shared futexes" ;;
    darwin)    pf_regions_note="darwin: UL_COMPARE_AND_WAIT_SHARED / OS_SYNC_WAIT_ON_ADDRESS_SHARED" ;;
    dragonfly) pf_regions_note="dragonfly: umtx_sleep (keyed by physical page)" ;;
    freebsd)   pf_regions_note="freebsd: UMTX_OP_WAIT_UINT / UMTX_OP_WAKE (shared)" ;;
    netbsd)    pf_regions_note="netbsd: shared futexes (no FUTEX_PRIVATE_FLAG)" ;;
    openbsd)   pf_regions_note="openbsd: shared futexes (OpenBSD 6.4+)" ;;
    win32)     pf_regions_note="win32: a named semaphore per waiting thread" ;;
    posix)     pf_regions_note="" ;;
  esac
  case $pf_ports in
    *sysv*) pf_regions_note="${pf_regions_note:+$pf_regions_note; }sysv: semaphore sets" ;;
  esac
}

# The ports a host family can build at all (a port needs its OS's call).
pf_ports_buildable ()
{
  case $pf_host_family in
    linux) echo "futex sysv" ;;
    win32) echo "win32" ;;
    posix) echo "sysv" ;;
    *)     echo "$pf_host_family sysv" ;;
  esac
}

pf_ports_resolve ()
{
  pf_ports_error=
  case $1 in
    "" | yes) return 0 ;;
    no) pf_ports=; return 0 ;;
  esac
  pf_want=`echo "$1" | tr ',' ' '`
  pf_can=`pf_ports_buildable`
  pf_ports=
  for pf_p in $pf_want; do
    case " $pf_can " in
      *" $pf_p "*) ;;
      *) case " futex sysv darwin dragonfly freebsd netbsd openbsd win32 " in
           *" $pf_p "*) pf_ports_error="the $pf_p port cannot be built for $pf_host_family hosts (they have: $pf_can)" ;;
           *)           pf_ports_error="unknown port '$pf_p' (known: futex sysv darwin dragonfly freebsd netbsd openbsd win32)" ;;
         esac
         return 1 ;;
    esac
    case " $pf_ports " in
      *" $pf_p "*) ;;
      *) pf_ports="${pf_ports:+$pf_ports }$pf_p" ;;
    esac
  done
  return 0
}
