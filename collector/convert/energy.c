#include "collector/convert/energy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

/* The file's text from its start (sysfs makes it anew at offset 0). -1 if unreadable. */
static ssize_t read_text(int fd, char *buf, size_t size)
{
	if (fd < 0 || lseek(fd, 0, SEEK_SET) != 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return n;
}

/* A decimal counter: 0 and ok, or -1 (unreadable or not a number). */
static int read_u64(int fd, uint64_t *out)
{
	char buf[32], *end;

	if (read_text(fd, buf, sizeof(buf)) <= 0)
		return -1;
	errno = 0;
	unsigned long long v = strtoull(buf, &end, 10);
	if (errno || end == buf || *end || buf[0] == '-')
		return -1;
	*out = v;
	return 0;
}

static void read_names(struct energy_reader *e)
{
	for (unsigned i = 0; i < e->rapl->n; i++) {
		const struct rapl_zone *z = &e->rapl->zones[i];
		if (read_text(z->name_fd, e->names[i], sizeof(e->names[i])) < 0)
			e->names[i][0] = '\0';
		log_info("RAPL: intel-rapl:%u (%s)", z->index,
			 e->names[i][0] ? e->names[i] : "no name");
	}
	e->named = 1;
}

int energy_sample(struct energy_reader *e, uint64_t ts_boot_ns,
		  int (*sink)(void *ctx, const Tracer__Event *ev), void *ctx)
{
	if (!e->rapl || !e->rapl->n)
		return 0;
	if (!e->named)
		read_names(e);
	for (unsigned i = 0; i < e->rapl->n; i++) {
		const struct rapl_zone *z = &e->rapl->zones[i];
		Tracer__Event ev = TRACER__EVENT__INIT;
		Tracer__EnergyEvent x = TRACER__ENERGY_EVENT__INIT;
		if (read_u64(z->energy_fd, &x.energy_uj) != 0) {
			if (!e->read_errors++)
				log_warn("RAPL: cannot read intel-rapl:%u/energy_uj: %s", z->index,
					 strerror(errno));
			continue;
		}
		x.zone = z->index;
		x.name = e->names[i][0] ? e->names[i] : NULL;
		x.has_max_energy_range_uj = read_u64(z->range_fd, &x.max_energy_range_uj) == 0;
		ev.ts_ns = ts_boot_ns;
		ev.kind_case = TRACER__EVENT__KIND_ENERGY;
		ev.energy = &x;
		if (sink(ctx, &ev) != 0)
			return -1;
	}
	return 0;
}
