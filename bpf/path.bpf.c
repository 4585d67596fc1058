// SPDX-License-Identifier: GPL-2.0
/*
 * Paths of a task's files (its executable, its working directory) walked from
 * their dentries up to the root of its mount namespace, a component per
 * bpf_loop step. Used by exec (process.bpf.c), chdir (cwd.bpf.c) and the
 * start-up snapshot (snapshot.bpf.c).
 */
#include "common.bpf.h"

struct path_walk {
	struct dentry *dentry;
	struct dentry *mnt_root;
	struct mount *mnt;
	struct mount *mnt_parent;
	char *buf;
	__u32 off;
	__u32 depth;
	__u32 done;
	__u32 pad;
};

/* Scratch for the path being built: ring buffer memory cannot be passed in. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[TRACER_CWD_MAX + TRACER_CWD_NAME_MAX]);
} path_scratch SEC(".maps");

/*
 * Pointers kept between walk steps lose their BTF type in the verifier's
 * eyes; bpf_rdonly_cast (common.bpf.h) gives it back. Only exec_btf uses
 * it: where the kernel lacks it the collector loads exec_tp instead.
 */
#define AS_KERNEL(direct, type, p)                                                                 \
	((direct) ? (type *)bpf_rdonly_cast((p), bpf_core_type_id_kernel(type)) : (type *)(p))

/*
 * Kernel reads go through plain locals, never through w->...: CO-RE would
 * try to relocate the fields of struct path_walk and fail the load.
 */
static __always_inline long walk_step_x(struct path_walk *w, bool direct)
{
	struct dentry *dentry = AS_KERNEL(direct, struct dentry, w->dentry);

	if (w->dentry == w->mnt_root) {
		struct mount *mnt = AS_KERNEL(direct, struct mount, w->mnt);

		if (w->mnt == w->mnt_parent) {
			w->done = 1;
			return 1;
		}
		/* Crossing a mount point: continue from where it is mounted. */
		w->dentry = KREAD(direct, mnt, mnt_mountpoint);
		mnt = AS_KERNEL(direct, struct mount, w->mnt_parent);
		w->mnt = mnt;
		w->mnt_parent = KREAD(direct, mnt, mnt_parent);
		w->mnt_root = KREAD(direct, mnt, mnt.mnt_root);
		return 0;
	}
	struct dentry *parent = KREAD(direct, dentry, d_parent);
	if (w->dentry == parent) {
		w->done = 1;
		return 1;
	}
	if (w->off >= TRACER_CWD_MAX)
		return 1;
	const unsigned char *name = KREAD(direct, dentry, d_name.name);
	long n = bpf_probe_read_kernel_str(&w->buf[w->off & (TRACER_CWD_MAX - 1)],
					   TRACER_CWD_NAME_MAX, name);
	if (n <= 0)
		return 1;
	w->off += n;
	w->depth++;
	w->dentry = parent;
	return 0;
}

static long walk_step_btf(__u64 index, void *ctx)
{
	return walk_step_x(ctx, true);
}

static long walk_step_tp(__u64 index, void *ctx)
{
	return walk_step_x(ctx, false);
}

/*
 * Write a path as NUL-separated components, leaf first; user space reverses
 * them. Crosses mount points up to the root of the task's mount namespace.
 * Returns bytes used.
 */
static __always_inline __u32 walk_path_in(char *scratch, struct dentry *dentry,
					  struct vfsmount *vfsmnt, char *out, __u32 out_size,
					  __u32 *depth_out, __u32 *flags, __u32 trunc_flag,
					  bool direct)
{
	struct path_walk w = {};

	w.buf = scratch;
	if (!w.buf)
		return 0;
	w.dentry = dentry;
	w.mnt_root = KREAD(direct, vfsmnt, mnt_root);
	/* container_of(vfsmnt, struct mount, mnt), with the offset from BTF. */
	struct mount *mnt = AS_KERNEL(direct, struct mount,
				      (void *)vfsmnt - bpf_core_field_offset(struct mount, mnt));
	w.mnt = mnt;
	w.mnt_parent = KREAD(direct, mnt, mnt_parent);
	bpf_loop(TRACER_CWD_DEPTH * 2, direct ? walk_step_btf : walk_step_tp, &w, 0);
	if (!w.done)
		*flags |= trunc_flag;
	*depth_out = w.depth;
	__u32 len = w.off;
	if (len > out_size)
		len = out_size;
	barrier_var(len);
	if (len > TRACER_CWD_MAX + TRACER_CWD_NAME_MAX)
		return 0;
	bpf_probe_read_kernel(out, len, w.buf);
	return len;
}

/* The tracepoints' walk, in their per-CPU scratch (they do not sleep: one at a time per CPU). */
static __always_inline __u32 walk_path(struct dentry *dentry, struct vfsmount *vfsmnt, char *out,
				       __u32 out_size, __u32 *depth_out, __u32 *flags,
				       __u32 trunc_flag, bool direct)
{
	__u32 zero = 0;

	return walk_path_in(bpf_map_lookup_elem(&path_scratch, &zero), dentry, vfsmnt, out,
			    out_size, depth_out, flags, trunc_flag, direct);
}
