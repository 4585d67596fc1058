/*
 * The pin set (--keep-pinned): the maps and links under
 * /sys/fs/bpf/tracer/<socket hash>-<object hash>/. Pinned, the programs stay
 * attached and events wait in the ring buffer while no collector runs; the
 * next collector of the same socket, made from the same object with the same
 * settings (the second hash), reuses the maps and attaches nothing. Any other
 * set of that socket is removed. Root-only (0700): only root reads or swaps it.
 */
#include "collector/setup/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/log.h"
#include "tracer.skel.h"

#define PIN_ROOT "/sys/fs/bpf/tracer"
#define BPF_FS_MAGIC 0xcafe4a11
#define FNV_BASIS 0xcbf29ce484222325ull

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
	for (const unsigned char *b = data; n--; b++)
		h = (h ^ *b) * 0x100000001b3ull;
	return h;
}

/* bpffs there (mounted if need be) and our root in it; p->pin_inst named. */
bool pins_ready(struct probes *p, const char *socket_path)
{
	struct statfs fs;

	snprintf(p->pin_inst, sizeof(p->pin_inst), "%016llx",
		 (unsigned long long)fnv(FNV_BASIS, socket_path, strlen(socket_path)));
	if ((statfs("/sys/fs/bpf", &fs) != 0 || fs.f_type != BPF_FS_MAGIC) &&
	    mount("bpf", "/sys/fs/bpf", "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700"))
		log_warn("not pinning: no bpffs on /sys/fs/bpf: %s", strerror(errno));
	else if (mkdir(PIN_ROOT, 0700) == 0 || errno == EEXIST)
		return true;
	return false;
}

/* This socket's sets, but p->pin_dir if kept: their pins, then the directory. How many. */
int pins_remove(const struct probes *p, bool keep_ours, const char *why)
{
	DIR *root = opendir(PIN_ROOT), *set;
	int n = 0;

	for (struct dirent *e, *f; root && (e = readdir(root));) {
		if (strncmp(e->d_name, p->pin_inst, 16) ||
		    !strcmp(p->pin_dir + sizeof(PIN_ROOT), e->d_name) ||
		    !(set = fdopendir(openat(dirfd(root), e->d_name, O_RDONLY | O_DIRECTORY))))
			continue;
		while ((f = readdir(set)))
			unlinkat(dirfd(set), f->d_name, 0);
		closedir(set);
		n += unlinkat(dirfd(root), e->d_name, AT_REMOVEDIR) == 0;
		log_info("removed the pin set " PIN_ROOT "/%s: %s", e->d_name, why);
	}
	if (root)
		closedir(root);
	return n;
}

/*
 * The set's name hashes the object, its settings (.rodata: ring size, CPUs,
 * switches) and which programs load. Maps are pinned by their index (bpffs
 * refuses the dots of tracer_b.bss), .rodata not (frozen: no writable fd
 * comes from its pin; the programs' own copy is the same). link0, pinned
 * last, says the set is whole; any other set of this socket is removed (a
 * fallback load on an older kernel may so remove the one it would reuse).
 */
void pins_name_maps(struct probes *p, struct tracer_bpf *skel)
{
	size_t n, ro_n;
	unsigned i = 0;
	struct bpf_map *map;
	struct bpf_program *prog;
	const void *elf = tracer_bpf__elf_bytes(&n);
	const void *ro = bpf_map__initial_value(skel->maps.rodata, &ro_n);
	uint64_t h = fnv(fnv(FNV_BASIS, elf, n), ro, ro_n);
	char path[sizeof(p->pin_dir) + 16];

	bpf_object__for_each_program(prog, skel->obj) h =
	    fnv(h, &"01"[bpf_program__autoload(prog)], 1);
	snprintf(p->pin_dir, sizeof(p->pin_dir), PIN_ROOT "/%s-%016llx", p->pin_inst,
		 (unsigned long long)h);
	snprintf(path, sizeof(path), "%s/link0", p->pin_dir);
	p->reusing = access(path, F_OK) == 0;
	pins_remove(p, p->reusing, "not whole, or made by another object or with other settings");
	bpf_object__for_each_map(map, skel->obj)
	{
		snprintf(path, sizeof(path), "%s/map%u", p->pin_dir, i++);
		if (bpf_map__autocreate(map) && !strstr(bpf_map__name(map), ".rodata"))
			bpf_map__set_pin_path(map, path);
	}
}

/* After attaching, link0 last. A link that cannot be pinned: nothing is left to reuse. */
void pins_links(struct probes *p)
{
	char path[sizeof(p->pin_dir) + 16];

	for (unsigned i = p->n_links; i-- > 0;) {
		snprintf(path, sizeof(path), "%s/link%u", p->pin_dir, i);
		if (bpf_link__pin(p->links[i], path) != 0) {
			log_warn("cannot pin %s: %s", path, strerror(errno));
			break;
		}
	}
}

int probes_unpin(const char *socket_path)
{
	static struct probes p;

	return pins_ready(&p, socket_path) ? (pins_remove(&p, false, "--unpin"), 0) : 1;
}
