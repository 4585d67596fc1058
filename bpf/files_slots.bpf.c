// SPDX-License-Identifier: GPL-2.0
/*
 * Per-process counts of the files group: a slot per distinct path (claimed
 * with atomics, as threads open at the same moment), the overflow beyond
 * TRACER_FILES_PER_PROC, and the flush at process exit that sends the counts
 * and forgets the process's paths.
 */

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
