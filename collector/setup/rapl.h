/*
 * RAPL package energy counters through the powercap interface
 * (/sys/class/powercap/intel-rapl:N, docs/energy.md). energy_uj is root's
 * only on current kernels: its files are opened here, as root, before the
 * drop, and only read (convert/energy.c) after it, every sample period.
 */
#ifndef TRACER_COLLECTOR_RAPL_H
#define TRACER_COLLECTOR_RAPL_H

#define RAPL_ZONES_MAX 8
#define POWERCAP_ROOT "/sys/class/powercap"

struct rapl_zone {
	unsigned index; /* N of intel-rapl:N */
	int energy_fd, range_fd, name_fd;
};

struct rapl {
	struct rapl_zone zones[RAPL_ZONES_MAX];
	unsigned n;
};

/* Opens what exists under root (NULL: POWERCAP_ROOT); none is no error. The zones opened. */
unsigned rapl_open(struct rapl *r, const char *root);
void rapl_close(struct rapl *r);

#endif
