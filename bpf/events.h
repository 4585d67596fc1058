/* SPDX-License-Identifier: MIT */
/*
 * Wire structs shared by the BPF programs and the collector. These are the
 * raw kernel records: the collector turns them into protobuf frames, so this
 * layout never leaves the host and can change with the BPF code.
 */
#ifndef TRACER_BPF_EVENTS_H
#define TRACER_BPF_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h> /* user space; BPF code gets these from vmlinux.h */
#endif

#define TRACER_COMM_LEN 16
#define TRACER_CWD_MAX 1024	 /* power of two: offsets are masked with it */
#define TRACER_CWD_NAME_MAX 256	 /* longest path component copied */
#define TRACER_CWD_DEPTH 48	 /* deepest directory we walk */
#define TRACER_ARGV_MAX 4096	 /* power of two */

enum tracer_event_type {
	TRACER_EV_FORK = 1,
	TRACER_EV_EXEC = 2,
	TRACER_EV_EXIT = 3,
	TRACER_EV_TYPE_MAX = 4,
};

/* Flags on exec and exit records. */
enum tracer_event_flags {
	TRACER_F_ARGV_TRUNCATED = 1 << 0,  /* argv longer than TRACER_ARGV_MAX */
	TRACER_F_ARGV_ERROR = 1 << 1,	   /* argv could not be read */
	TRACER_F_CWD_TRUNCATED = 1 << 2,   /* deeper than TRACER_CWD_DEPTH or longer */
	TRACER_F_CWD_ERROR = 1 << 3,	   /* no fs_struct (kernel thread) */
	TRACER_F_PEAK_FROM_SIGNAL = 1 << 4, /* no mm at exit: peak is signal->maxrss */
	TRACER_F_PREV_PEAK_KNOWN = 1 << 5,  /* prev_peak_rss_kb came from prepare_exec */
	TRACER_F_FILENAME_TRUNCATED = 1 << 6,
};

/*
 * Whole-process totals as the kernel keeps them: the same sources getrusage()
 * and /proc/PID/io read. utime/stime are the raw tick-sampled split;
 * runtime_ns is the precise scheduler runtime. User space scales the split to
 * the runtime exactly like the kernel's cputime_adjust() does for getrusage.
 */
struct tracer_counters {
	__u64 utime_ns;
	__u64 stime_ns;
	__u64 runtime_ns;
	__u64 nvcsw;
	__u64 nivcsw;
	__u64 min_flt;
	__u64 maj_flt;
	__u64 rchar;
	__u64 wchar;
	__u64 syscr;
	__u64 syscw;
	__u64 read_bytes;
	__u64 write_bytes;
	__u64 cancelled_write_bytes;
	__u64 peak_rss_kb;   /* post-exec address space high-water mark */
	__u64 signal_maxrss_kb; /* ru_maxrss: inflated by the pre-exec parent */
};

struct tracer_event_header {
	__u32 type;
	__u32 flags;
	__u64 ts_ns; /* CLOCK_BOOTTIME */
	__u32 pid;   /* tgid */
	__u32 tid;
	__u64 start_ns; /* group leader's start, CLOCK_BOOTTIME: identity with pid */
};

struct tracer_fork_event {
	struct tracer_event_header h;
	__u32 parent_pid;
	__u32 uid;
	__u64 parent_start_ns;
	__u32 gid;
	__u32 pad;
	char comm[TRACER_COMM_LEN];
};

struct tracer_exec_event {
	struct tracer_event_header h;
	__u32 old_tid;
	__u32 ppid;
	__u64 parent_start_ns;
	__u32 uid;
	__u32 gid;
	__u64 cgroup_id;    /* cgroup v2 (unified) id */
	__u64 cgroup1_id;   /* v1 memory controller cgroup id, 0 if none */
	__u64 prev_peak_rss_kb; /* peak of the image this exec replaced */
	struct tracer_counters at_exec;
	__u32 argv_len;
	__u32 filename_len;
	__u32 cwd_len;	    /* bytes used in cwd: NUL-separated, leaf first */
	__u32 cwd_depth;
	char comm[TRACER_COMM_LEN];
	char filename[TRACER_CWD_MAX + TRACER_CWD_NAME_MAX]; /* like cwd */
	char cwd[TRACER_CWD_MAX + TRACER_CWD_NAME_MAX];
	char argv[TRACER_ARGV_MAX];
};

struct tracer_exit_event {
	struct tracer_event_header h;
	__s32 exit_code; /* raw wait status: (status << 8) | signal | 0x80 core */
	__u32 ppid;
	struct tracer_counters totals;
	char comm[TRACER_COMM_LEN];
};

/* Indices of the per-CPU drop counter array. */
enum tracer_drop_index {
	TRACER_DROP_FORK = 0,
	TRACER_DROP_EXEC = 1,
	TRACER_DROP_EXIT = 2,
	TRACER_DROP_MAX = 8,
};

#endif
