/*
 * The collector's steady state, after privileges are dropped: a seccomp
 * allow-list of the syscalls it needs to drain the kernel buffers, sample,
 * and talk to the aggregator. Anything else kills the process (SIGSYS):
 * a compromised collector cannot open files, exec, ptrace or load more BPF.
 */
#ifndef TRACER_SANDBOX_H
#define TRACER_SANDBOX_H

#include <stdbool.h>

/* 0, or -1 with the reason logged: the caller must exit (fail closed). */
int sandbox_enter(void);

/* Whether sandbox_enter installed the allow-list (sanitizer builds do not). */
bool sandbox_active(void);

#endif
