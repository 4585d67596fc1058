// SPDX-License-Identifier: GPL-2.0
/*
 * The floor under file tracking on syscall tracepoints: programs on the same
 * four exit tracepoints that do nothing and return 0, as tracer's do. A
 * nonzero return (bpftrace's empty action returns 1) also makes the kernel
 * build and submit a perf sample per open, which is not a floor.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("tracepoint/syscalls/sys_exit_openat")
int floor_openat(void *ctx)
{
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_openat2")
int floor_openat2(void *ctx)
{
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_open")
int floor_open(void *ctx)
{
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_creat")
int floor_creat(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
