#include "collector/setup/rapl.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static int open_in(const char *root, unsigned n, const char *file)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/intel-rapl:%u/%s", root, n, file);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* Descriptors only: nothing is read as root. */
unsigned rapl_open(struct rapl *r, const char *root)
{
	r->n = 0;
	for (unsigned i = 0; i < RAPL_ZONES_MAX; i++) {
		int fd = open_in(root ? root : POWERCAP_ROOT, i, "energy_uj");
		if (fd < 0)
			continue;
		struct rapl_zone *z = &r->zones[r->n++];
		z->index = i;
		z->energy_fd = fd;
		z->range_fd = open_in(root ? root : POWERCAP_ROOT, i, "max_energy_range_uj");
		z->name_fd = open_in(root ? root : POWERCAP_ROOT, i, "name");
	}
	return r->n;
}

void rapl_close(struct rapl *r)
{
	for (unsigned i = 0; i < r->n; i++) {
		close(r->zones[i].energy_fd);
		if (r->zones[i].range_fd >= 0)
			close(r->zones[i].range_fd);
		if (r->zones[i].name_fd >= 0)
			close(r->zones[i].name_fd);
	}
	r->n = 0;
}
