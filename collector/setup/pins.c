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

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
	for (const unsigned char *b = data; n--; b++)
		h = (h ^ *b) * 0x100000001b3ull;
	return h;
}

bool pins_ready(struct probes *p, const char *socket_path)
{
	struct statfs fs;

	snprintf(p->pin_inst, sizeof(p->pin_inst), "%016llx",
		 (unsigned long long)fnv(0xcbf29ce484222325ull, socket_path, strlen(socket_path)));
	if ((statfs("/sys/fs/bpf", &fs) != 0 || fs.f_type != BPF_FS_MAGIC) &&
	    mount("bpf", "/sys/fs/bpf", "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700")) {
		log_warn("not pinning: no bpffs on /sys/fs/bpf, and mounting it failed: %s",
			 strerror(errno));
		return false;
	}
	return mkdir(PIN_ROOT, 0700) == 0 || errno == EEXIST;
}

void pins_name_maps(struct probes *p, struct tracer_bpf *skel)
{
	size_t n;
	struct bpf_map *map;
	struct bpf_program *prog;
	char path[sizeof(p->pin_dir) + 64];
	const void *elf = tracer_bpf__elf_bytes(&n);
	uint64_t h = fnv(0xcbf29ce484222325ull, elf, n);
	const void *ro = bpf_map__initial_value(skel->maps.rodata, &n);

	h = fnv(h, ro, n);
	bpf_object__for_each_program(prog, skel->obj) h =
	    fnv(h, "01" + bpf_program__autoload(prog), 1);
	bpf_object__for_each_map(map, skel->obj)
	{
		uint32_t size = bpf_map__max_entries(map);
		h = fnv(h, &size, sizeof(size));
	}
	snprintf(p->pin_dir, sizeof(p->pin_dir), PIN_ROOT "/%s-%016llx", p->pin_inst,
		 (unsigned long long)h);
	bpf_object__for_each_map(map, skel->obj)
	{
		int len = snprintf(path, sizeof(path), "%s/%s", p->pin_dir, bpf_map__name(map));
		/* .rodata is frozen: no writable fd from its pin; the programs' own copy will do.
		 */
		bool frozen = strstr(path, ".rodata") != NULL;
		/* bpffs refuses dots in names (tracer_b.bss). */
		for (char *dot = path + len - strlen(bpf_map__name(map)); (dot = strchr(dot, '.'));)
			*dot = '_';
		if (bpf_map__autocreate(map) && !frozen)
			bpf_map__set_pin_path(map, path);
	}
	snprintf(path, sizeof(path), "%s/link0", p->pin_dir);
	p->reusing = access(path, F_OK) == 0;
}

void pins_links(struct probes *p)
{
	char path[sizeof(p->pin_dir) + 16];

	for (unsigned i = 0; i < p->n_links; i++) {
		snprintf(path, sizeof(path), "%s/link%u", p->pin_dir, i);
		if (bpf_link__pin(p->links[i], path) != 0)
			log_warn("cannot pin %s: %s", path, strerror(errno));
	}
	log_info("pinned under %s: the programs stay attached when we exit (--unpin)", p->pin_dir);
}

int pins_remove(const struct probes *p, const char *why)
{
	DIR *root = opendir(PIN_ROOT), *set;
	struct dirent *e, *f;
	int n = 0;

	while (root && (e = readdir(root)))
		if (!strncmp(e->d_name, p->pin_inst, 16) && e->d_name[16] == '-' &&
		    strcmp(p->pin_dir + sizeof(PIN_ROOT), e->d_name) &&
		    (set = fdopendir(openat(dirfd(root), e->d_name, O_RDONLY | O_DIRECTORY)))) {
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

int probes_unpin(const char *socket_path)
{
	static struct probes p;

	if (!pins_ready(&p, socket_path))
		return 1;
	log_info("--unpin: %d pin sets of %s removed", pins_remove(&p, "--unpin"), socket_path);
	return 0;
}
