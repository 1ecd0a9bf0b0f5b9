/* semun.h - union semun, semctl's fourth argument, where <sys/sem.h> does
 * not declare it (configure's HAVE_UNION_SEMUN): POSIX leaves it to the
 * program; glibc never declares it, FreeBSD and NetBSD only for the
 * kernel or on request, macOS does.  Include after <sys/sem.h>. */
#ifndef PF_SYSV_SEMUN_H
#define PF_SYSV_SEMUN_H

#ifndef HAVE_UNION_SEMUN
union semun {
  int val;
  struct semid_ds *buf;
  unsigned short *array;
};
#endif

/* The Linux-style scan of every set by index (SEM_INFO, then SEM_STAT per
 * index): where struct seminfo, SEM_INFO's answer, is a user type.
 * FreeBSD defines the two macros for user programs but the struct only
 * for the kernel. */
#if defined(HAVE_STRUCT_SEMINFO) && defined(SEM_INFO) && defined(SEM_STAT)
# define PF_SYSV_HAVE_SEM_SCAN 1
#endif

#endif
