// SPDX-License-Identifier: GPL-2.0
/*
 * Files each process opens: path, flags and result, deduplicated per process
 * in the kernel, bounded (TRACER_FILES_PER_PROC distinct paths), and filtered
 * before anything is sent (configured prefixes such as /proc/, /sys/, /dev/,
 * and shared libraries). Only the first open of a path becomes an event; how
 * often it was opened is counted here and sent once, when the process exits.
 * Paths only: never file contents. Only the exit tracepoints are used: the
 * kernel runs these programs for the open family alone, and the arguments
 * are read back from the task's saved registers.
 *
 * Reading the path from user memory is most of an open's cost, and programs
 * often open the same file again and again. So each process remembers its
 * recent successful opens by (user buffer address, the file's device, inode
 * and generation): a repeat open found there is counted without reading its
 * path again. The file comes from the fd table, read with plain loads. This needs
 * the bpf_rdonly_cast kfunc (Linux 6.2+), so only file_openat_exit has it;
 * file_openat_uncached is the same without it, for older kernels.
 *
 * This file holds the group's maps and constants; the rest, included after it
 * by tracer.bpf.c: files_filter.bpf.c (what is not listed, the path hash),
 * files_recent.bpf.c (the open's arguments, the repeat-open cache),
 * files_slots.bpf.c (the counts per path, the flush at exit) and
 * files_open.bpf.c (the programs).
 */
#include "common.bpf.h"

#define AT_FDCWD -100
#define O_WRONLY 01
#define O_RDWR 02
#define O_ACCMODE 03
#define O_CREAT 0100
#define O_TRUNC 01000

/* Excluded path prefixes, set before load: plain loads, no map lookup per open. */
const volatile __u32 n_exclude = 0;
const volatile bool exclude_shared_libs = true;
const volatile char file_exclude[TRACER_FILE_PREFIXES][TRACER_FILE_PREFIX_LEN] = {};
/*
 * Which excluded prefixes name a kind of file the kernel can tell without the
 * path (TRACER_SKIP_*): procfs and sysfs by their superblock, devices by their
 * inode's mode. Set by the collector from the prefixes above.
 */
const volatile __u32 skip_kinds = 0;

#define PROC_SUPER_MAGIC 0x9fa0
#define SYSFS_MAGIC 0x62656572
#define S_IFMT 00170000
#define S_IFCHR 0020000
#define S_IFBLK 0060000

struct file_key {
	__u32 tgid;
	__u32 pad;
	__u64 hash;
};

/*
 * Where a path's counts are: its slot in the process's file_index, or
 * FILE_SLOT_OVERFLOWED for a path beyond the tracked ones. Those are chained
 * through next_overflowed (0 ends the chain) so they can be forgotten at exit.
 */
struct file_val {
	__u32 slot;
	__u32 pad;
	__u64 next_overflowed;
};

#define FILE_SLOT_OVERFLOWED 0xffffffffU

/* Overflowed paths remembered per process; past them, files_overflow is an upper bound. */
#define FILE_OVERFLOW_REMEMBERED 4096

#ifndef EEXIST
#define EEXIST 17
#endif
#ifndef E2BIG
#define E2BIG 7
#endif

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 262144);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct file_key);
	__type(value, struct file_val);
} file_seen SEC(".maps");

/*
 * A recent open: (identity | code) in one 64-bit word, so a thread never
 * reads half of another thread's entry. The code is a slot, or FILE_IGNORED
 * for a path that is filtered out.
 */
#define FILE_RECENT 16
#define FILE_CODE_MASK 0x1ffULL
#define FILE_IGNORED 0x100
#define FILE_OVERFLOWED 0x101

/*
 * Per process: its paths in slot order, their counts, and its recent opens.
 * overflow counts distinct paths beyond the tracked ones; the newest of them
 * heads a chain of overflow_linked entries in file_seen.
 */
struct file_index {
	/* Slots handed out; may pass TRACER_FILES_PER_PROC. 64 bits for the atomics. */
	__u64 n;
	__u64 overflow_head;
	__u32 overflow;
	__u32 overflow_linked;
	__u64 hashes[TRACER_FILES_PER_PROC];
	__u32 count[TRACER_FILES_PER_PROC];
	__u32 failed[TRACER_FILES_PER_PROC];
	__u32 flags_union[TRACER_FILES_PER_PROC];
	__u64 recent[FILE_RECENT];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct file_index);
} file_index SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[TRACER_PATH_MAX]);
} path_buf SEC(".maps");

/*
 * Shared libraries and the loader's cache (named like one, ld.so.cache), by
 * inode identity, for every process: once a path named one, the next open of
 * that file by anybody is counted without reading its path. A hard link to
 * one under another name would not be listed either: the price of deciding
 * before the path is read.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u8);
} file_ignored SEC(".maps");

/* Opens counted but not listed (TRACER_FILES_*), summed over CPUs by whoever asks. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TRACER_FILES_STAT_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} file_open_stats SEC(".maps");

static __always_inline void count_stat(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&file_open_stats, &which);

	if (n)
		*n += 1;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct file_index);
} index_zero SEC(".maps");
