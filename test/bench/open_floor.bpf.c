// SPDX-License-Identifier: GPL-2.0
/*
 * The floor under file tracking on syscall tracepoints: programs on the same
 * four exit tracepoints that do nothing and return 0, as tracer's do. A
 * nonzero return (bpftrace's empty action returns 1) also makes the kernel
 * build and submit a perf sample per open, which is not a floor.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

/* One program per tracepoint: a program attaches to exactly one. */
#define EMPTY_ON_EXIT_OF(syscall)                                                                  \
	SEC("tracepoint/syscalls/sys_exit_" #syscall)                                              \
	int floor_##syscall(void *ctx)                                                             \
	{                                                                                          \
		return 0;                                                                          \
	}

EMPTY_ON_EXIT_OF(openat)
EMPTY_ON_EXIT_OF(openat2)
EMPTY_ON_EXIT_OF(open)
EMPTY_ON_EXIT_OF(creat)

char LICENSE[] SEC("license") = "GPL";
