// SPDX-License-Identifier: GPL-2.0
/*
 * tracer's kernel side, one object so all programs share their maps. Each
 * concern is its own file; the collector attaches what the kernel offers and
 * the configuration allows, and reports the rest as missing or disabled.
 */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#include "files.bpf.c"
#include "files_filter.bpf.c"
#include "files_recent.bpf.c"
#include "files_slots.bpf.c"
#include "files_open.bpf.c"
#include "counters.bpf.c"
#include "path.bpf.c"
#include "process.bpf.c"
#include "cwd.bpf.c"
#include "netwait.bpf.c"
#include "sched.bpf.c"
#include "syscalls.bpf.c"
#include "net.bpf.c"
#include "mem.bpf.c"
#include "cgroup.bpf.c"
#include "iter.bpf.c"
#include "snapshot.bpf.c"
