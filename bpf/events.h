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
#define TRACER_CWD_MAX 1024	/* power of two: offsets are masked with it */
#define TRACER_CWD_NAME_MAX 256 /* longest path component copied */
#define TRACER_CWD_DEPTH 48	/* deepest directory we walk */
#define TRACER_ARGV_MAX 4096	/* power of two */

/*
 * Every kind of event, defined once: the ring buffer's record types, then the
 * samples the task iterator reads. Per-type counters (kernel drops, the
 * collector's queue losses) are indexed by it; 0 stands for "other".
 * Names: common/eventtypes.h.
 */
enum tracer_event_type {
	TRACER_EV_FORK = 1,
	TRACER_EV_EXEC = 2,
	TRACER_EV_EXIT = 3,
	TRACER_EV_OOM = 4,
	TRACER_EV_FILE = 5,
	TRACER_EV_FILE_COUNTS = 6,
	TRACER_EV_CGROUP = 7,
	TRACER_EV_EXIT_TAIL = 8,
	TRACER_EV_CWD = 9,
	TRACER_EV_SAMPLE = 10,
	TRACER_EV_COUNT = 11,
};
/* The kernel's drop counters, by ring-buffer event type (1 .. TRACER_EV_CWD). */
#define TRACER_DROP_SLOTS TRACER_EV_SAMPLE

/*
 * What a collector leaves in a pinned .bss for the next one (--keep-pinned):
 * written by the collector only, never by the programs. The next collector
 * resumes the stream and counts as lost the events held here that the
 * aggregator did not commit (collector/send/handover.c).
 */
#define TRACER_HANDOVER_FRAMES 64
struct tracer_handover {
	__u8 stream_id[16];
	__u64 next_seq;		     /* 0: nothing to resume */
	__u64 lost[TRACER_EV_COUNT]; /* the collector hop's counts, by type */
	__u64 held[TRACER_EV_COUNT]; /* read from the ring, neither acked nor counted lost */
	struct {
		__u64 seq; /* 0: free */
		__u32 types[TRACER_EV_COUNT];
		__u32 pad;
	} sent[TRACER_HANDOVER_FRAMES]; /* by seq: frames sent, maybe committed */
};

/* Syscall classes counted per process (collector fills the table per arch). */
enum tracer_sys_class {
	TRACER_SYS_OTHER = 0,
	TRACER_SYS_FILE = 1,
	TRACER_SYS_NET = 2,
	TRACER_SYS_MEM = 3,
	TRACER_SYS_PROC = 4,
	TRACER_SYS_CLASSES = 5,
};
#define TRACER_SYSCALL_MAX 512

/* What a thread blocked on the network waited for (netwait.bpf.c). */
enum tracer_net_wait_kind {
	TRACER_NET_WAIT_RECV = 0,
	TRACER_NET_WAIT_SEND = 1,
	TRACER_NET_WAIT_CONNECT = 2,
	TRACER_NET_WAIT_ACCEPT = 3,
	TRACER_NET_WAIT_POLL = 4, /* poll/select/epoll with an internet socket open */
	TRACER_NET_WAIT_KINDS = 5,
};
/* Network waits not attributed, host-wide (net_wait_stats slots). */
#define TRACER_NETW_FD_UNREADABLE 0 /* a socket-capable syscall's descriptor table unreadable */
#define TRACER_NETW_NO_ACC 1	    /* no room for the process's accumulator */
#define TRACER_NETW_STATS 2

#define TRACER_PATH_MAX 512	  /* file paths from open(): longer ones are cut */
#define TRACER_FILES_PER_PROC 256 /* distinct files tracked per process */
#define TRACER_FILE_PREFIXES 16	  /* configurable excluded prefixes */
/* Excluded prefixes the kernel tells by the file, not its path (files.bpf.c). */
#define TRACER_SKIP_PROC 1u /* "/proc/": procfs */
#define TRACER_SKIP_SYS 2u  /* "/sys/": sysfs */
#define TRACER_SKIP_DEV 4u  /* "/dev/": device nodes */
/* file_open_stats slots: opens counted but not listed, and paths read from user memory. */
#define TRACER_FILES_IGNORED 0
#define TRACER_FILES_PATHS_READ 1
#define TRACER_FILES_STAT_COUNT 2
#define TRACER_FILE_PREFIX_LEN 32

/* Flags on exec and exit records. */
enum tracer_event_flags {
	TRACER_F_ARGV_TRUNCATED = 1 << 0,   /* argv longer than TRACER_ARGV_MAX */
	TRACER_F_ARGV_ERROR = 1 << 1,	    /* argv could not be read */
	TRACER_F_CWD_TRUNCATED = 1 << 2,    /* deeper than TRACER_CWD_DEPTH or longer */
	TRACER_F_CWD_ERROR = 1 << 3,	    /* no fs_struct (kernel thread) */
	TRACER_F_PEAK_FROM_SIGNAL = 1 << 4, /* no mm at exit: peak is signal->maxrss */
	TRACER_F_PREV_PEAK_KNOWN = 1 << 5,  /* prev_peak_rss_kb came from prepare_exec */
	TRACER_F_FILENAME_TRUNCATED = 1 << 6,
	TRACER_F_FROM_SNAPSHOT = 1 << 7, /* exec: already running at start-up (snapshot.bpf.c) */
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
	__u64 vol_ctxsw;
	__u64 invol_ctxsw;
	__u64 min_faults;
	__u64 maj_faults;
	__u64 rchar;
	__u64 wchar;
	__u64 syscr;
	__u64 syscw;
	__u64 read_bytes;
	__u64 write_bytes;
	__u64 cancelled_write_bytes;
	__u64 peak_rss_kb;	/* post-exec address space high-water mark */
	__u64 signal_maxrss_kb; /* ru_maxrss: inflated by the pre-exec parent */
	/* Aggregated in the kernel from scheduler, syscall and socket hooks. */
	__u64 runq_ns;	  /* runnable, waiting for a CPU (sched_info.run_delay) */
	__u64 iowait_ns;  /* blocked in io_schedule() until woken */
	__u64 reclaim_ns; /* in direct memory reclaim */
	__u64 net_tx_bytes;
	__u64 net_rx_bytes;
	__u64 sys[TRACER_SYS_CLASSES];
	__u64 sys_failed;
	/* Blocked on the network (netwait.bpf.c), by tracer_net_wait_kind. */
	__u64 net_wait_ns[TRACER_NET_WAIT_KINDS];
	__u64 net_wait_max_ns;	 /* the longest single network wait ... */
	__u32 net_wait_max_peer; /* ... its peer: address family << 16 | port */
	__u32 pad;
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
	__u64 cgroup_id;  /* the child's cgroups at fork (clone3 may place it elsewhere) */
	__u64 cgroup1_id; /* v1 memory controller, 0 if none */
};

struct tracer_exec_event {
	struct tracer_event_header h;
	__u32 old_tid;
	__u32 ppid;
	__u64 parent_start_ns;
	__u32 uid;
	__u32 gid;
	__u64 cgroup_id;	/* cgroup v2 (unified) id */
	__u64 cgroup1_id;	/* v1 memory controller cgroup id, 0 if none */
	__u64 prev_peak_rss_kb; /* peak of the image this exec replaced */
	struct tracer_counters at_exec;
	__u32 argv_len;
	__u32 filename_len;
	__u32 cwd_len; /* bytes used in cwd: NUL-separated, leaf first */
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
	/* Killed by a signal another process sent with kill(2) and the like: that
	 * process (its tgid in the collector's namespace; 0: none known). */
	__u32 killer_pid;
	/* Stamp of the read of the totals (exit tails carry the one they belong to). */
	__u32 walk_seq;
	char killer_comm[TRACER_COMM_LEN];
};

/*
 * What the last thread of a process used after the exit tracepoint: its exit
 * path (freeing memory, closing files) up to its last switch-out as a dead
 * task, where its runtime is final. The exit event's totals plus these are
 * what wait4 reports. Header: pid is the tgid, start_ns the leader's start.
 */
struct tracer_exit_tail_event {
	struct tracer_event_header h;
	__u64 runtime_ns;
	__u64 utime_ns;
	__u64 stime_ns;
	__u32 walk_seq; /* the exit event's walk_seq when this tail belongs to its totals */
	__u32 pad;
};

/* A process changed its working directory (chdir, fchdir): relative opens follow it. */
struct tracer_cwd_event {
	struct tracer_event_header h;
	__u32 cwd_len; /* bytes used in cwd: NUL-separated, leaf first (as in exec) */
	__u32 cwd_depth;
	char cwd[TRACER_CWD_MAX + TRACER_CWD_NAME_MAX];
};

/* The victim of an OOM kill, as oom:mark_victim saw it. */
struct tracer_oom_event {
	struct tracer_event_header h;
	__u64 total_vm_kb;
	__u64 anon_rss_kb;
	__u64 file_rss_kb;
	__u64 shmem_rss_kb;
	__u64 cgroup_id;
	__u64 cgroup1_id;
	__u64 memcg_limit_kb; /* the victim's memory cgroup limit; 0 if none */
	__u64 memcg_usage_kb;
	__s32 oom_score_adj;
	__u32 uid;
	char comm[TRACER_COMM_LEN];
};

enum tracer_file_flags {
	TRACER_FILE_RELATIVE = 1 << 0,	/* path relative to the cwd */
	TRACER_FILE_DIRFD = 1 << 1,	/* relative to a directory fd: path as given */
	TRACER_FILE_TRUNCATED = 1 << 2, /* longer than TRACER_PATH_MAX */
};

/* First open of a path by a process. */
struct tracer_file_event {
	struct tracer_event_header h;
	__u32 open_flags; /* O_* as passed */
	__s32 result;	  /* 0 on success, else -errno */
	__u32 file_flags; /* tracer_file_flags */
	__u32 slot;	  /* index in this process's file table */
	__u32 path_len;
	__u32 pad;
	char path[TRACER_PATH_MAX];
};

/* At process exit: how often each tracked file was opened. */
struct tracer_file_counts_event {
	struct tracer_event_header h;
	__u32 n;	/* slots used */
	__u32 overflow; /* distinct files beyond TRACER_FILES_PER_PROC */
	__u32 count[TRACER_FILES_PER_PROC];
	__u32 failed[TRACER_FILES_PER_PROC];
	__u32 flags_union[TRACER_FILES_PER_PROC];
};

enum tracer_cgroup_op { TRACER_CGROUP_MKDIR = 1, TRACER_CGROUP_RMDIR = 2 };

struct tracer_cgroup_event {
	struct tracer_event_header h;
	__u64 id;	 /* kernfs id: the inode number of the cgroup directory */
	__u32 hierarchy; /* 0 for cgroup v2, else the v1 hierarchy id */
	__u32 level;
	__u32 op;
	__u32 path_len;
	char path[TRACER_PATH_MAX];
};

/* A live sample of a process, written by the task iterator (not the ring). */
struct tracer_sample {
	__u32 pid;
	__u32 nthreads;
	__u64 start_ns;
	__u64 ts_ns;
	__u64 utime_ns, stime_ns, runtime_ns;
	__u64 rss_kb;
	__u64 rchar, wchar, read_bytes, write_bytes;
	__u64 runq_ns, iowait_ns;
	__u64 net_tx_bytes, net_rx_bytes;
	__u64 vol_ctxsw, invol_ctxsw;
	__u32 state; /* R S D T Z ... as a character */
	__u32 pad;
};

/*
 * These structs are read by both sides as raw bytes: the sizes are asserted
 * so a change that makes the BPF and user-space layouts differ cannot build.
 */
_Static_assert(sizeof(struct tracer_counters) == 272, "tracer_counters layout");
_Static_assert(sizeof(struct tracer_event_header) == 32, "tracer_event_header layout");
_Static_assert(sizeof(struct tracer_fork_event) == 88, "tracer_fork_event layout");
_Static_assert(sizeof(struct tracer_exec_event) == 7040, "tracer_exec_event layout");
_Static_assert(sizeof(struct tracer_exit_event) == 352, "tracer_exit_event layout");
_Static_assert(sizeof(struct tracer_oom_event) == 120, "tracer_oom_event layout");
_Static_assert(sizeof(struct tracer_exit_tail_event) == 64, "tracer_exit_tail_event layout");
_Static_assert(sizeof(struct tracer_cwd_event) == 1320, "tracer_cwd_event layout");
_Static_assert(sizeof(struct tracer_file_event) == 568, "tracer_file_event layout");
_Static_assert(sizeof(struct tracer_file_counts_event) == 3112, "tracer_file_counts_event layout");
_Static_assert(sizeof(struct tracer_cgroup_event) == 568, "tracer_cgroup_event layout");
_Static_assert(sizeof(struct tracer_sample) == 144, "tracer_sample layout");

#endif
