// SPDX-License-Identifier: GPL-2.0
/*
 * The repeat-open cache of the files group: the open's arguments from the
 * task's saved registers, and the file it opened (device, inode, generation)
 * from the fd table by plain loads, so a repeat open is counted without
 * reading its path (files.bpf.c explains why).
 */

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
