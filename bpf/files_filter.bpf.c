// SPDX-License-Identifier: GPL-2.0
/*
 * Which opens are not listed, decided from the path read (configured prefixes,
 * shared libraries) or from the file itself (pseudo file systems, devices),
 * and the hash that keys a path in file_seen. Part of the files group
 * (files.bpf.c has the maps).
 */

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
