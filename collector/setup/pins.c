/*
 * The pin set (--keep-pinned): the maps and links under
 * /sys/fs/bpf/tracer/<socket hash>-<object hash>/. Pinned, the programs stay
 * attached and events wait in the ring buffer while no collector runs; the
 * next collector of the same socket, made from the same object with the same
 * settings (the second hash), reuses the maps and attaches nothing. Any other
 * set of that socket is removed. Root-only (0700): only root reads or swaps it.
 */
#include "collector/setup/internal.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <bpf/bpf.h>

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

bool pins_ready(struct probes *p, const char *socket_path)
{
	struct statfs fs;
	int n = snprintf(p->pin_dir, sizeof(p->pin_dir), PIN_ROOT "/%016llx",
			 (unsigned long long)fnv(FNV_BASIS, socket_path, strlen(socket_path)));

	p->pin_inst = (unsigned)n;
	if ((statfs("/sys/fs/bpf", &fs) != 0 || fs.f_type != BPF_FS_MAGIC) &&
	    mount("bpf", "/sys/fs/bpf", "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700"))
		log_warn("not pinning: no bpffs on /sys/fs/bpf: %s", strerror(errno));
	else if ((mkdir(PIN_ROOT, 0700) == 0 || errno == EEXIST) && access(PIN_ROOT, W_OK) == 0)
		return true;
	else /* a read-only bpffs (a unit's ProtectKernelTunables=, a container) */
		log_warn("not pinning: %s: %s", PIN_ROOT, strerror(errno));
	return false;
}

/* What pins_remove removes (paths starting so), what it keeps (a set's path, or NULL), why. */
static const char *removing, *keeping, *removing_why;
static size_t removing_len;

static int remove_pin(const char *path, const struct stat *st, int type, struct FTW *at)
{
	if (at->level > 0 && !strncmp(path, removing, removing_len) &&
	    (!keeping || strncmp(path, keeping, strlen(keeping))) && !remove(path) &&
	    at->level == 1)
		log_info("removed the pin set %s: %s", path, removing_why);
	return 0;
}

int pins_remove(const struct probes *p, const char *keep, const char *why)
{
	removing = p->pin_dir;
	removing_len = p->pin_inst;
	keeping = keep;
	removing_why = why;
	return nftw(PIN_ROOT, remove_pin, 8, FTW_DEPTH | FTW_PHYS) != 0;
}

/*
 * The set's name hashes the object, its settings (.rodata: ring size, CPUs,
 * switches) and which programs load. Maps are pinned by their index (bpffs
 * refuses the dots of tracer_b.bss), .rodata not (frozen: no writable fd
 * comes from its pin; the programs' own copy is the same). "whole", a second
 * pin of a link made once all are pinned, says the set can be reused; any
 * other set of this socket is removed (a fallback load on an older kernel may
 * so remove the one it would have reused).
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
	snprintf(p->pin_dir + p->pin_inst, sizeof(p->pin_dir) - p->pin_inst, "-%016llx",
		 (unsigned long long)h);
	snprintf(path, sizeof(path), "%s/whole", p->pin_dir);
	p->reusing = access(path, F_OK) == 0;
	pins_remove(p, p->reusing ? p->pin_dir : NULL,
		    "not whole, or another build's or settings'");
	bpf_object__for_each_map(map, skel->obj)
	{
		snprintf(path, sizeof(path), "%s/map%u", p->pin_dir, i++);
		if (bpf_map__autocreate(map) && !strstr(bpf_map__name(map), ".rodata"))
			bpf_map__set_pin_path(map, path);
	}
}

bool pins_link(struct probes *p, struct bpf_link *link, int i)
{
	char path[sizeof(p->pin_dir) + 16];

	if (i < 0)
		snprintf(path, sizeof(path), "%s/whole", p->pin_dir);
	else
		snprintf(path, sizeof(path), "%s/link%d", p->pin_dir, i);
	if (bpf_obj_pin(bpf_link__fd(link), path) == 0)
		return true;
	log_warn("cannot pin %s: %s", path, strerror(errno));
	return false;
}
