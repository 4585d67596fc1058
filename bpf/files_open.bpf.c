// SPDX-License-Identifier: GPL-2.0
/*
 * The files group's programs: the exit tracepoints of the open family, and
 * what one open does (cached repeat, filtered, counted, or a first open sent
 * as an event).
 */

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

/*
 * A repeat open of a file this process has (not) tracked, found among its
 * recent opens: counted against what it named before, and true.
 */
static __always_inline bool counted_repeat(struct file_index *idx, __u64 identity, long ret,
					   __u32 flags)
{
	if (!idx || !identity)
		return false;
	__u64 entry = *recent_entry(idx, identity);
	if ((entry & ~FILE_CODE_MASK) != identity)
		return false;
	__u32 code = entry & FILE_CODE_MASK;
	if (code < TRACER_FILES_PER_PROC)
		count_open(idx, code, ret, flags, false);
	else if (code == FILE_IGNORED)
		count_stat(TRACER_FILES_IGNORED);
	return true;
}

/* A path read that is not listed (a configured prefix, a library): counted, and true. */
static __always_inline bool ignored_path(struct file_index *idx, __u64 identity,
					 struct inode *inode, __u64 file_id, const char *path,
					 long n)
{
	bool by_prefix = excluded_prefix(path);
	bool library = !by_prefix && exclude_shared_libs && is_shared_library(path, n);

	if (!by_prefix && !library)
		return false;
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
	return true;
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
	if (counted_repeat(idx, identity, ret, args.flags))
		return 0;
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
	if (ignored_path(idx, identity, inode, file_id, path, n))
		return 0;

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
