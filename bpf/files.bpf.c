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

static __always_inline bool excluded_prefix(const char *path)
{
	for (__u32 i = 0; i < TRACER_FILE_PREFIXES; i++) {
		if (i >= n_exclude)
			return false;
		for (int j = 0; j < TRACER_FILE_PREFIX_LEN; j++) {
			char c = file_exclude[i][j];
			if (c == '\0')
				return true;
			if (path[j] != c)
				break;
		}
	}
	return false;
}

/*
 * "libc.so.6", "x.so", "/etc/ld.so.cache": the loader's business, not the
 * tool's. n counts the terminating NUL, so ".so" ending the path sits at n-4.
 */
static __always_inline bool is_shared_library(const char *p, long n)
{
	for (int k = 3; k < 20; k++) {
		long i = n - 1 - k;
		if (i < 0)
			break;
		i &= TRACER_PATH_MAX - 1;
		if (i + 3 >= TRACER_PATH_MAX)
			break;
		if (p[i] == '.' && p[i + 1] == 's' && p[i + 2] == 'o' &&
		    (p[i + 3] == '.' || p[i + 3] == '\0'))
			return true;
	}
	return false;
}

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "path_hash masks a path's last word as little-endian"
#endif

/*
 * A 64-bit hash of the path's n bytes (its NUL included), eight at a time,
 * with MurmurHash3's mixing: an eighth of the loop a byte at a time cost,
 * in run time and, as the verifier walks every iteration, in load time
 * (the files group's verification went from 1.2 s to well under 0.1 s).
 * Bytes after the NUL are left over from the buffer's last use: masked off.
 */
static __always_inline __u64 path_hash(const char *p, long n)
{
	const __u64 *words = (const __u64 *)p;
	__u64 h = 0x9e3779b97f4a7c15ULL ^ (__u64)n;

	for (int i = 0; i < TRACER_PATH_MAX / 8; i++) {
		long left = n - i * 8;
		if (left <= 0)
			break;
		__u64 v = words[i];
		if (left < 8)
			v &= (1ULL << (left * 8)) - 1;
		v *= 0x87c37b91114253d5ULL;
		v = (v << 31) | (v >> 33);
		v *= 0x4cf5ad432745937fULL;
		h ^= v;
		h = ((h << 27) | (h >> 37)) * 5 + 0x52dce729;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

struct open_args {
	const char *filename;
	__u32 flags;
	__s32 dfd;
};

/* bpf_task_pt_regs() gives a BTF pointer: direct loads, no probe-read calls. */
#if defined(__TARGET_ARCH_x86)
#define SYSCALL_ARG1(regs) ((regs)->di)
#define SYSCALL_ARG2(regs) ((regs)->si)
#define SYSCALL_ARG3(regs) ((regs)->dx)
#elif defined(__TARGET_ARCH_arm64)
/* x0 holds the return value by now; the first argument survives in orig_x0. */
#define SYSCALL_ARG1(regs) ((regs)->orig_x0)
#define SYSCALL_ARG2(regs) ((regs)->regs[1])
#define SYSCALL_ARG3(regs) ((regs)->regs[2])
#else
#error "syscall argument access is defined for x86_64 and arm64"
#endif

enum open_kind { OPEN_OPENAT, OPEN_OPENAT2, OPEN_OPEN, OPEN_CREAT };

/*
 * At syscall exit the arguments are still in the task's saved user
 * registers: no entry hook and no map between entry and exit are needed.
 */
static __always_inline struct open_args open_arguments(struct task_struct *task,
						       enum open_kind kind)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct open_args a = {.dfd = AT_FDCWD};
	__u64 how_flags = 0;

	switch (kind) {
	case OPEN_OPENAT:
		a.dfd = (__s32)SYSCALL_ARG1(regs);
		a.filename = (const char *)SYSCALL_ARG2(regs);
		a.flags = (__u32)SYSCALL_ARG3(regs);
		break;
	case OPEN_OPENAT2:
		a.dfd = (__s32)SYSCALL_ARG1(regs);
		a.filename = (const char *)SYSCALL_ARG2(regs);
		bpf_probe_read_user(&how_flags, sizeof(how_flags), (void *)SYSCALL_ARG3(regs));
		a.flags = (__u32)how_flags;
		break;
	case OPEN_OPEN:
		a.filename = (const char *)SYSCALL_ARG1(regs);
		a.flags = (__u32)SYSCALL_ARG2(regs);
		break;
	case OPEN_CREAT:
		a.filename = (const char *)SYSCALL_ARG1(regs);
		a.flags = O_WRONLY | O_CREAT | O_TRUNC;
		break;
	}
	return a;
}

/*
 * The inode the new fd refers to, by plain loads; NULL if unreadable.
 * fdt->fd is an array of struct file pointers, which the verifier cannot
 * index. A kernel type whose first member is a struct file pointer reads the
 * entry as a plain load, faults caught. Should a kernel move ki_filp, there
 * is no cache rather than a wrong one.
 */
static __always_inline struct inode *inode_of_fd(struct task_struct *task, long fd)
{
	struct fdtable *fdt = task->files->fdt;
	struct file *file;

	if (bpf_core_field_offset(struct kiocb, ki_filp) != 0)
		return NULL;
	if (fd < 0 || fd >= fdt->max_fds)
		return NULL;
	struct kiocb *entry = bpf_rdonly_cast((void *)fdt->fd + fd * sizeof(file),
					      bpf_core_type_id_kernel(struct kiocb));
	file = entry->ki_filp;
	if (!file)
		return NULL;
	return file->f_inode;
}

/* The file itself: device, inode number and generation (a reused number differs). */
static __always_inline __u64 inode_identity(struct inode *inode)
{
	__u64 h = (inode->i_ino ^ (__u64)inode->i_sb->s_dev << 40) * 0xc2b2ae3d27d4eb4fULL;

	h ^= (__u64)inode->i_generation << 32;
	return h ^ h >> 29;
}

/*
 * An open of a kind of file the configuration excludes, told by the kernel
 * without the path: /proc and /sys by their file systems, /dev by device nodes.
 */
static __always_inline bool skipped_kind(struct inode *inode)
{
	__u32 kinds = skip_kinds;

	if (!kinds)
		return false;
	unsigned long magic = inode->i_sb->s_magic;
	__u32 type = inode->i_mode & S_IFMT;
	return ((kinds & TRACER_SKIP_PROC) && magic == PROC_SUPER_MAGIC) ||
	       ((kinds & TRACER_SKIP_SYS) && magic == SYSFS_MAGIC) ||
	       ((kinds & TRACER_SKIP_DEV) && (type == S_IFCHR || type == S_IFBLK));
}

/*
 * Which file, named through which user buffer: the inode's identity mixed
 * with the buffer's address. Bit 63 set, code bits clear.
 */
static __always_inline __u64 open_identity(__u64 file_id, const char *name)
{
	__u64 h = (__u64)name * 0x9e3779b97f4a7c15ULL ^ file_id;

	h ^= h >> 29;
	return (h | 1ULL << 63) & ~FILE_CODE_MASK;
}

static __always_inline __u64 *recent_entry(struct file_index *idx, __u64 identity)
{
	return &idx->recent[(identity >> 32) & (FILE_RECENT - 1)];
}

static __always_inline void remember(struct file_index *idx, __u64 identity, __u32 code)
{
	if (identity)
		*recent_entry(idx, identity) = identity | code;
}

/*
 * The union of an open's flags with the earlier ones. The access mode is a
 * value, not bits (O_RDONLY is 0): opens with different modes make O_RDWR.
 */
static __always_inline __u32 union_flags(__u32 have, __u32 flags, bool first)
{
	if (first)
		return flags;
	__u32 mode = (have & O_ACCMODE) == (flags & O_ACCMODE) ? have & O_ACCMODE : O_RDWR;
	return ((have | flags) & ~O_ACCMODE) | mode;
}

/* first: the open that took the slot, so no earlier flags to merge with. */
static __always_inline void count_open(struct file_index *idx, __u32 slot, long ret, __u32 flags,
				       bool first)
{
	slot &= TRACER_FILES_PER_PROC - 1;
	__sync_fetch_and_add(&idx->count[slot], 1);
	if (ret < 0)
		__sync_fetch_and_add(&idx->failed[slot], 1);
	__u32 have = idx->flags_union[slot], want = union_flags(have, flags, first);
	if (want != have)
		idx->flags_union[slot] = want;
}

/*
 * A path beyond the tracked ones: counted once, however often it is opened.
 * Its file_seen entry joins the process's chain, which files_flush walks.
 * Returns the entry another thread of the process put there first (for the
 * caller to count this open against), else NULL.
 */
static __always_inline struct file_val *count_overflowed(struct file_index *idx,
							 const struct file_key *key)
{
	struct file_val v = {.slot = FILE_SLOT_OVERFLOWED};
	long err = -E2BIG;

	/* Bounded, so one `tar x` cannot fill file_seen for every other process. */
	if (idx->overflow_linked < FILE_OVERFLOW_REMEMBERED)
		err = bpf_map_update_elem(&file_seen, key, &v, BPF_NOEXIST);
	/* Another thread was first: it may hold the last slot, which this open counts in. */
	if (err == -EEXIST)
		return bpf_map_lookup_elem(&file_seen, key);
	__sync_fetch_and_add(&idx->overflow, 1);
	/* Not remembered: counted, but a later open of this path counts again. */
	struct file_val *mine = err ? NULL : bpf_map_lookup_elem(&file_seen, key);
	if (!mine)
		return NULL;
	/* xchg: threads of one process may overflow at the same moment. */
	mine->next_overflowed = __sync_lock_test_and_set(&idx->overflow_head, key->hash);
	__sync_fetch_and_add(&idx->overflow_linked, 1);
	return NULL;
}

/* An open of a path already in file_seen: counted against its slot, or nowhere if overflowed. */
static __always_inline void count_seen(struct file_index *idx, const struct file_val *seen,
				       __u64 identity, long ret, __u32 flags)
{
	if (seen->slot == FILE_SLOT_OVERFLOWED) {
		remember(idx, identity, FILE_OVERFLOWED);
		return;
	}
	count_open(idx, seen->slot, ret, flags, false);
	remember(idx, identity, seen->slot);
}

/*
 * Empties a slot whose path could not be remembered and gives it back,
 * unless another thread has taken a later one meanwhile: then it stays
 * empty (no path, count 0), which user space skips.
 */
static __always_inline void release_slot(struct file_index *idx, __u64 slot)
{
	__u32 s = slot & (TRACER_FILES_PER_PROC - 1);

	idx->hashes[s] = 0;
	idx->count[s] = 0;
	idx->failed[s] = 0;
	idx->flags_union[s] = 0;
	__sync_val_compare_and_swap(&idx->n, slot + 1, slot);
}

/*
 * A slot for a path this process opens for the first time, recorded in
 * file_seen. False when the open was counted another way (the table is full,
 * another thread was first) or dropped (counted as a loss).
 */
static __always_inline bool claim_slot(struct file_index *idx, struct file_key *key, __u64 identity,
				       long ret, __u32 flags, __u64 *slot_out)
{
	/* Threads opening new paths at the same moment each get a slot of their own. */
	__u64 slot = idx->n;
	if (slot < TRACER_FILES_PER_PROC)
		slot = __sync_fetch_and_add(&idx->n, 1);
	if (slot >= TRACER_FILES_PER_PROC) {
		struct file_val *first = count_overflowed(idx, key);
		if (first)
			count_seen(idx, first, identity, ret, flags);
		else
			remember(idx, identity, FILE_OVERFLOWED);
		return false;
	}
	/* Nobody else can reach the slot before its path is in file_seen: fill it first. */
	idx->hashes[slot & (TRACER_FILES_PER_PROC - 1)] = key->hash;
	count_open(idx, slot, ret, flags, true);
	struct file_val v = {.slot = slot};
	long err = bpf_map_update_elem(&file_seen, key, &v, BPF_NOEXIST);
	if (err) {
		/* Undone, or file_seen full would cost a slot at every open of the path. */
		release_slot(idx, slot);
		struct file_val *seen =
		    err == -EEXIST ? bpf_map_lookup_elem(&file_seen, key) : NULL;
		if (seen) /* another thread of the process was first */
			count_seen(idx, seen, identity, ret, flags);
		else
			count_drop(TRACER_EV_FILE);
		return false;
	}
	remember(idx, identity, slot);
	*slot_out = slot;
	return true;
}

/* The first open of a path by a process, to user space. */
static __always_inline void emit_file_event(void *ctx, struct task_struct *task,
					    const struct open_args *args, const char *path, long n,
					    __u64 slot, long ret)
{
	struct tracer_file_event *e = event_reserve(sizeof(*e));

	if (!e) {
		count_drop(TRACER_EV_FILE);
		return;
	}
	fill_header(&e->h, TRACER_EV_FILE, task);
	e->open_flags = args->flags;
	e->result = ret < 0 ? (__s32)ret : 0;
	e->file_flags = 0;
	if (path[0] != '/')
		e->file_flags |= args->dfd == AT_FDCWD ? TRACER_FILE_RELATIVE : TRACER_FILE_DIRFD;
	if (n >= TRACER_PATH_MAX)
		e->file_flags |= TRACER_FILE_TRUNCATED;
	e->slot = slot;
	e->path_len = n;
	e->pad = 0;
	bpf_probe_read_kernel(e->path, sizeof(e->path), path);
	event_submit(ctx, e, sizeof(*e), TRACER_EV_FILE);
}

static __always_inline int on_open_exit(void *ctx, long ret, enum open_kind kind, bool use_recent)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tgid = task->tgid, zero = 0;
	struct open_args args = open_arguments(task, kind);
	struct file_index *idx = bpf_map_lookup_elem(&file_index, &tgid);
	struct inode *inode = NULL;
	__u64 identity = 0, file_id = 0;
	char *path;
	long n;

	if (use_recent && ret >= 0 && (inode = inode_of_fd(task, ret))) {
		file_id = inode_identity(inode);
		identity = open_identity(file_id, args.filename);
	}
	/* A repeat open of a file this process has (not) tracked: count it, done. */
	if (idx && identity) {
		__u64 entry = *recent_entry(idx, identity);
		if ((entry & ~FILE_CODE_MASK) == identity) {
			__u32 code = entry & FILE_CODE_MASK;
			if (code < TRACER_FILES_PER_PROC)
				count_open(idx, code, ret, args.flags, false);
			else if (code == FILE_IGNORED)
				count_stat(TRACER_FILES_IGNORED);
			return 0;
		}
	}
	/* Excluded without reading the path: a pseudo file, or a file once found excluded. */
	if (inode && (skipped_kind(inode) || bpf_map_lookup_elem(&file_ignored, &file_id))) {
		if (idx)
			remember(idx, identity, FILE_IGNORED);
		count_stat(TRACER_FILES_IGNORED);
		return 0;
	}

	path = bpf_map_lookup_elem(&path_buf, &zero);
	if (!path)
		return 0;
	n = bpf_probe_read_user_str(path, TRACER_PATH_MAX, args.filename);
	if (n <= 1)
		return 0;
	count_stat(TRACER_FILES_PATHS_READ);
	bool by_prefix = excluded_prefix(path);
	bool library = !by_prefix && exclude_shared_libs && is_shared_library(path, n);
	if (by_prefix || library) {
		if (idx)
			remember(idx, identity, FILE_IGNORED);
		/*
		 * A library is one by its name; a prefix may have been reached
		 * through an alias of another file (/proc/self/fd/3, /dev/stdin,
		 * a symlink), which must not hide that file's own name later.
		 */
		if (library && inode) {
			__u8 one = 1;
			bpf_map_update_elem(&file_ignored, &file_id, &one, BPF_ANY);
		}
		count_stat(TRACER_FILES_IGNORED);
		return 0;
	}

	struct file_key key = {.tgid = tgid, .hash = path_hash(path, n)};
	struct file_val *seen = bpf_map_lookup_elem(&file_seen, &key);
	if (seen) {
		/* Another thread's first open may have made the index since ours was looked up. */
		if (!idx)
			idx = bpf_map_lookup_elem(&file_index, &tgid);
		if (idx)
			count_seen(idx, seen, identity, ret, args.flags);
		return 0;
	}
	if (!idx) {
		struct file_index *blank = bpf_map_lookup_elem(&index_zero, &zero);
		if (!blank)
			return 0;
		bpf_map_update_elem(&file_index, &tgid, blank, BPF_NOEXIST);
		idx = bpf_map_lookup_elem(&file_index, &tgid);
		if (!idx)
			return 0;
	}
	__u64 slot;
	if (claim_slot(idx, &key, identity, ret, args.flags, &slot))
		emit_file_event(ctx, task, &args, path, n, slot, ret);
	return 0;
}

struct counts_walk {
	__u32 tgid;
	__u32 n;
	struct file_index *idx;
	struct tracer_file_counts_event *e;
};

static long collect_count(__u64 i, void *ctx)
{
	struct counts_walk *w = ctx;
	__u32 slot = (__u32)i & (TRACER_FILES_PER_PROC - 1);
	struct file_index *idx = w->idx;
	struct file_key key = {.tgid = w->tgid, .hash = idx->hashes[slot]};

	if (w->e) {
		w->e->count[slot] = idx->count[slot];
		w->e->failed[slot] = idx->failed[slot];
		w->e->flags_union[slot] = idx->flags_union[slot];
	}
	bpf_map_delete_elem(&file_seen, &key);
	return 0;
}

struct overflow_walk {
	__u32 tgid;
	__u64 hash;
};

/* Forgets one overflowed path, moving on to the one overflowed before it. */
static long forget_overflowed(__u64 i, void *ctx)
{
	struct overflow_walk *w = ctx;
	struct file_key key = {.tgid = w->tgid, .hash = w->hash};
	struct file_val *v;

	(void)i;
	if (!w->hash)
		return 1;
	v = bpf_map_lookup_elem(&file_seen, &key);
	if (!v)
		return 1;
	w->hash = v->next_overflowed;
	bpf_map_delete_elem(&file_seen, &key);
	return 0;
}

/* At process exit: send how often each of its files was opened, forget them. */
static __always_inline void files_flush(void *ctx, struct task_struct *task, __u32 tgid)
{
	struct file_index *idx = bpf_map_lookup_elem(&file_index, &tgid);
	struct tracer_file_counts_event *e;

	if (!idx)
		return;
	e = event_reserve(sizeof(*e));
	if (!e)
		count_drop(TRACER_EV_FILE_COUNTS);
	__u32 n = idx->n < TRACER_FILES_PER_PROC ? idx->n : TRACER_FILES_PER_PROC;
	struct counts_walk w = {.tgid = tgid, .n = n, .idx = idx, .e = e};
	if (e) {
		fill_header(&e->h, TRACER_EV_FILE_COUNTS, task);
		e->n = n;
		e->overflow = idx->overflow;
	}
	bpf_loop(n, collect_count, &w, 0);
	struct overflow_walk ow = {.tgid = tgid, .hash = idx->overflow_head};
	bpf_loop(idx->overflow_linked, forget_overflowed, &ow, 0);
	if (e)
		event_submit(ctx, e, sizeof(*e), TRACER_EV_FILE_COUNTS);
	bpf_map_delete_elem(&file_index, &tgid);
}

SEC("tracepoint/syscalls/sys_exit_openat")
int file_openat_exit(struct trace_event_raw_sys_exit *ctx)
{
	return on_open_exit(ctx, ctx->ret, OPEN_OPENAT, true);
}

/* file_openat_exit for kernels without the bpf_rdonly_cast kfunc. */
SEC("tracepoint/syscalls/sys_exit_openat")
int file_openat_uncached(struct trace_event_raw_sys_exit *ctx)
{
	return on_open_exit(ctx, ctx->ret, OPEN_OPENAT, false);
}

SEC("tracepoint/syscalls/sys_exit_openat2")
int file_openat2_exit(struct trace_event_raw_sys_exit *ctx)
{
	return on_open_exit(ctx, ctx->ret, OPEN_OPENAT2, false);
}

SEC("tracepoint/syscalls/sys_exit_open")
int file_open_exit(struct trace_event_raw_sys_exit *ctx)
{
	return on_open_exit(ctx, ctx->ret, OPEN_OPEN, false);
}

SEC("tracepoint/syscalls/sys_exit_creat")
int file_creat_exit(struct trace_event_raw_sys_exit *ctx)
{
	return on_open_exit(ctx, ctx->ret, OPEN_CREAT, false);
}
