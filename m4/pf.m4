# pf.m4: local macros for pfutex.

# PF_CC_TRY_FLAG(FLAG, ACTION-IF-OK): does the C compiler accept FLAG (as an error if not)?
AC_DEFUN([PF_CC_TRY_FLAG], [
  AS_VAR_PUSHDEF([pf_var], [pf_cv_cflag_$1])
  AC_CACHE_CHECK([whether $CC accepts $1], [pf_var], [
    save_CFLAGS=$CFLAGS; CFLAGS="$CFLAGS -Werror $1"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])], [AS_VAR_SET([pf_var], [yes])], [AS_VAR_SET([pf_var], [no])])
    CFLAGS=$save_CFLAGS])
  AS_VAR_IF([pf_var], [yes], [$2])
  AS_VAR_POPDEF([pf_var])])

# PF_PTHREAD: find how to build threaded code; sets PTHREAD_CFLAGS and PTHREAD_LIBS.
AC_DEFUN([PF_PTHREAD], [
  AC_CACHE_CHECK([how to build with POSIX threads], [pf_cv_pthread], [
    pf_cv_pthread=no
    for pf_try in "-pthread" "" "-lpthread"; do
      save_CFLAGS=$CFLAGS save_LIBS=$LIBS
      case $pf_try in -l*) LIBS="$LIBS $pf_try" ;; *) CFLAGS="$CFLAGS $pf_try" LIBS="$LIBS $pf_try" ;; esac
      AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <pthread.h>
static void *f(void *a) { return a; }]], [[pthread_t t; pthread_create(&t, 0, f, 0); pthread_join(t, 0);]])],
        [pf_cv_pthread="$pf_try"; test -n "$pf_try" || pf_cv_pthread=none])
      CFLAGS=$save_CFLAGS LIBS=$save_LIBS
      test "x$pf_cv_pthread" != xno && break
    done])
  AS_CASE([$pf_cv_pthread],
    [no], [AC_MSG_ERROR([pfutex needs POSIX threads])],
    [none], [PTHREAD_CFLAGS= PTHREAD_LIBS=],
    [-l*], [PTHREAD_CFLAGS= PTHREAD_LIBS=$pf_cv_pthread],
    [PTHREAD_CFLAGS=$pf_cv_pthread PTHREAD_LIBS=$pf_cv_pthread])
  AC_SUBST([PTHREAD_CFLAGS]) AC_SUBST([PTHREAD_LIBS])])

# PF_LIBATOMIC_OPS: find libatomic_ops.  Every atomic in pfutex goes
# through it.  The primitives pfutex uses are inline on most targets; the
# library is linked only when a test program using them does not link
# without it (e.g. the 64-bit Debian archive on a -m32 build, where only
# the header is usable).  Candidates, in order, the first whose test
# program links for the host winning (doc/ports.md, "Building for another
# system"):
#   1. AO_CFLAGS and AO_LIBS, when both are given (alone: an error if they
#      fail);
#   2. pkg-config's atomic_ops.pc.  On a cross build only where pkg-config
#      can describe the host (HOST-pkg-config, or one of PKG_CONFIG_LIBDIR,
#      PKG_CONFIG_SYSROOT_DIR, PKG_CONFIG_PATH set); a cross build's .pc
#      that fails the host check (PKG_CONFIG_PATH set for another reason
#      finds the build machine's) is passed over, and the summary says so;
#   3. the host compiler's own atomic_ops.h (and -latomic_ops if AO_pause
#      needs it);
#   4. cross builds only: the build machine's headers (they are the same
#      for every CPU and OS: they choose by the compiler's predefined
#      macros), staged alone in ao-include/ of the build directory so that
#      no other header of the build machine comes with them.
# Sets AO_CFLAGS, AO_LIBS and pf_ao_how.
AC_DEFUN([PF_AO_PROG], [AC_LANG_PROGRAM([[#include <atomic_ops.h>
#if !defined(AO_HAVE_compare_and_swap_full) || !defined(AO_HAVE_fetch_and_add_full) \
 || !defined(AO_HAVE_nop_full) || !defined(AO_HAVE_load_acquire) || !defined(AO_HAVE_store_release) \
 || !defined(AO_HAVE_int_compare_and_swap_full) || !defined(AO_HAVE_int_load) \
 || !defined(AO_HAVE_int_load_acquire) || !defined(AO_HAVE_int_fetch_and_add_full) \
 || !defined(AO_HAVE_int_store_release) || !defined(AO_HAVE_fetch_and_sub1_full) \
 || !defined(AO_HAVE_fetch_and_add1_full)
# error missing primitive
#endif
volatile AO_t x; volatile unsigned y;]], [[AO_compare_and_swap_full(&x, 0, 1); AO_fetch_and_add_full(&x, 1);
AO_nop_full(); AO_store_release(&x, AO_load_acquire(&x)); return (int)AO_int_compare_and_swap_full(&y, 0, 1);]])])

# PF_AO_TRY(WHAT): do AO_CFLAGS/AO_LIBS give the host the primitives?
# pf_ao_ok: inline (AO_LIBS emptied), linked, or no.  Never cached: each
# candidate is tried afresh.
AC_DEFUN([PF_AO_TRY], [
  AC_MSG_CHECKING([whether libatomic_ops from $1 has the primitives pfutex needs for $host])
  pf_ao_save_CFLAGS=$CFLAGS pf_ao_save_LIBS=$LIBS
  CFLAGS="$CFLAGS $AO_CFLAGS"
  AC_LINK_IFELSE([PF_AO_PROG], [pf_ao_ok=inline],
    [LIBS="$LIBS $AO_LIBS"
     AS_IF([test -n "$AO_LIBS"], [AC_LINK_IFELSE([PF_AO_PROG], [pf_ao_ok=linked], [pf_ao_ok=no])], [pf_ao_ok=no])])
  CFLAGS=$pf_ao_save_CFLAGS LIBS=$pf_ao_save_LIBS
  AS_CASE([$pf_ao_ok],
    [inline], [AO_LIBS=
               AC_MSG_RESULT([yes, all inline])],
    [linked], [AC_MSG_RESULT([yes, with $AO_LIBS])],
    [AC_MSG_RESULT([no])])])

AC_DEFUN([PF_LIBATOMIC_OPS], [
  pf_ao_how= pf_ao_skipped= pf_ao_ok=no
  m4_define([pf_ao_done], [AS_CASE([$pf_ao_ok],
    [inline], [pf_ao_how="$pf_ao_how, header only (all primitives inline)"],
    [linked], [pf_ao_how="$pf_ao_how, linked: $AO_LIBS"])])
  dnl 1. Given.
  AS_IF([test -n "${AO_CFLAGS+set}" && test -n "${AO_LIBS+set}"], [
    PF_AO_TRY([AO_CFLAGS/AO_LIBS])
    AS_IF([test $pf_ao_ok = no], [AC_MSG_ERROR([AO_CFLAGS/AO_LIBS (${AO_CFLAGS:-none} / ${AO_LIBS:-none}) give no libatomic_ops with
compare-and-swap, fetch-and-add and full barriers for $host])])
    pf_ao_how="AO_CFLAGS/AO_LIBS given (${AO_CFLAGS:-none})"
  ], [
  dnl 2. pkg-config, where it can describe the host.
  pf_ao_pc=yes
  if test "$cross_compiling" = yes && test -z "$PKG_CONFIG_LIBDIR$PKG_CONFIG_SYSROOT_DIR$PKG_CONFIG_PATH"; then
    case `basename "${PKG_CONFIG:-pkg-config}"` in
      "$host_alias"-*|"$host"-*) ;;
      *) pf_ao_pc=no ;;
    esac
  fi
  AS_IF([test $pf_ao_pc = yes], [PKG_CHECK_MODULES([AO], [atomic_ops],
    [pf_ao_ver=`$PKG_CONFIG --modversion atomic_ops 2>/dev/null`
     pf_ao_pcdir=`$PKG_CONFIG --variable=pcfiledir atomic_ops 2>/dev/null`
     PF_AO_TRY([pkg-config (atomic_ops $pf_ao_ver${pf_ao_pcdir:+ in $pf_ao_pcdir})])
     AS_IF([test $pf_ao_ok != no],
       [pf_ao_how="pkg-config atomic_ops $pf_ao_ver${PKG_CONFIG_SYSROOT_DIR:+ (sysroot $PKG_CONFIG_SYSROOT_DIR)}"],
       [test "$cross_compiling" = yes],
       [AC_MSG_WARN([pkg-config's atomic_ops ($pf_ao_pcdir) does not build for $host: the build machine's? Passed over.])
        pf_ao_skipped="pkg-config's atomic_ops.pc in ${pf_ao_pcdir:-?} passed over: not for $host; "
        AO_CFLAGS= AO_LIBS=],
       [AC_MSG_ERROR([libatomic_ops (pkg-config atomic_ops $pf_ao_ver) lacks compare-and-swap, fetch-and-add or
full barriers for $host, or is not built for $host.
On Debian or Ubuntu install a current one with: apt-get install libatomic-ops-dev])])],
    [AO_CFLAGS= AO_LIBS=])],
    [AC_MSG_NOTICE([cross build: not asking ${PKG_CONFIG:-pkg-config} for atomic_ops (it is the build machine's)])])
  dnl 3. The host compiler's own header.
  AS_IF([test $pf_ao_ok = no], [
    AC_CHECK_HEADER([atomic_ops.h], [
      pf_ao_save_LIBS=$LIBS
      AC_SEARCH_LIBS([AO_pause], [atomic_ops], [test "x$ac_cv_search_AO_pause" = "xnone required" || AO_LIBS=$ac_cv_search_AO_pause])
      LIBS=$pf_ao_save_LIBS
      PF_AO_TRY([the compiler's own atomic_ops.h])
      AS_IF([test $pf_ao_ok != no], [pf_ao_how="header check"], [AO_LIBS=])])])
  dnl 4. Cross builds: the build machine's headers, staged alone.
  AS_IF([test $pf_ao_ok = no && test "$cross_compiling" = yes], [
    pf_ao_bdir=
    AC_MSG_CHECKING([for the build machine's libatomic_ops headers])
    for pf_d in `pkg-config --variable=includedir atomic_ops 2>/dev/null` /usr/include /usr/local/include; do
      if test -f "$pf_d/atomic_ops.h" && test -d "$pf_d/atomic_ops"; then pf_ao_bdir=$pf_d; break; fi
    done
    AC_MSG_RESULT([${pf_ao_bdir:-no}])
    AS_IF([test -n "$pf_ao_bdir"], [
      rm -rf ao-include && mkdir ao-include \
        && { ln -s "$pf_ao_bdir/atomic_ops.h" "$pf_ao_bdir/atomic_ops" ao-include/ 2>/dev/null \
             || cp -pR "$pf_ao_bdir/atomic_ops.h" "$pf_ao_bdir/atomic_ops" ao-include/; } \
        || AC_MSG_ERROR([could not stage $pf_ao_bdir/atomic_ops.h and atomic_ops/ in ao-include/])
      AO_CFLAGS="-I`pwd`/ao-include" AO_LIBS=
      PF_AO_TRY([the build machine's headers ($pf_ao_bdir)])
      AS_IF([test $pf_ao_ok != no],
        [pf_ao_how="the build machine's headers ($pf_ao_bdir, staged in ao-include/)"],
        [AC_MSG_ERROR([${pf_ao_skipped}libatomic_ops's headers alone ($pf_ao_bdir) lack inline compare-and-swap,
fetch-and-add or full barriers for $host: the library built for $host is
needed.  Pass its location:
  PKG_CONFIG_LIBDIR=DIR-OF-ITS-atomic_ops.pc [[PKG_CONFIG_SYSROOT_DIR=SYSROOT]]
or AO_CFLAGS=-IDIR-OF-ITS-atomic_ops.h AO_LIBS="-LDIR-OF-ITS-LIBRARY -latomic_ops"])])])])
  AS_IF([test $pf_ao_ok = no], [
    AS_IF([test "$cross_compiling" = yes], [AC_MSG_ERROR([${pf_ao_skipped}libatomic_ops was not found for $host.
Install libatomic_ops's headers on this machine (Debian: apt-get install
libatomic-ops-dev), or point configure at a libatomic_ops built for $host:
  PKG_CONFIG_LIBDIR=DIR-OF-ITS-atomic_ops.pc [[PKG_CONFIG_SYSROOT_DIR=SYSROOT]]
or AO_CFLAGS=-IDIR-OF-ITS-atomic_ops.h AO_LIBS="-LDIR-OF-ITS-LIBRARY -latomic_ops"])])
    AC_MSG_ERROR([libatomic_ops was not found, or lacks compare-and-swap, fetch-and-add or full
barriers for $host.  On Debian or Ubuntu install it with: apt-get install libatomic-ops-dev
(or point PKG_CONFIG_PATH at its atomic_ops.pc, or set AO_CFLAGS and AO_LIBS)])])
  ])
  pf_ao_done
  pf_ao_how="$pf_ao_skipped$pf_ao_how"
  AC_SUBST([AO_CFLAGS]) AC_SUBST([AO_LIBS])])
