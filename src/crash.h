/* crash.h - crash points (configure --enable-crash-points; testing only).
 * PF_CRASH(name) marks a step where a test may have the process SIGKILL
 * (PFUTEX_CRASH_AT=name:k) or SIGSTOP (PFUTEX_STOP_AT=name:k) itself: the
 * kill tests' way to stop a process at any instruction that matters
 * (src/crash.c).  Without the option, nothing. */
#ifndef PF_CRASH_H
#define PF_CRASH_H

#include "pf.h"

#ifdef PF_CRASH_POINTS
void pf_crash_point(const char *name);
# define PF_CRASH_HOOK(name) pf_crash_point(name)
/* The names of every crash point (NULL terminated), and the target a
 * white-box test may set instead of PFUTEX_CRASH_AT: the process SIGKILLs
 * itself when it reaches pf_crash_name for the pf_crash_left-th time. */
extern const char *const pf_crash_points[];
extern const char *pf_crash_name;
extern long pf_crash_left;
extern const char *pf_stop_name;       /* PFUTEX_STOP_AT: SIGSTOP instead */
extern long pf_stop_left;
#else
# define PF_CRASH_HOOK(name) ((void)0)
#endif
/* --enable-sched-points: every crash point is a scheduling point too
 * (src/schedpt.h). */
#ifdef PF_SCHED_POINTS
# define PF_CRASH(name) (PF_SCHED_POINT(), PF_CRASH_HOOK(name))
#else
# define PF_CRASH(name) PF_CRASH_HOOK(name)
#endif

#endif
