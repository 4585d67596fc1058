#include "aggregator/receive/hostsample.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/timeutil.h"

void host_sampler_init(struct host_sampler *h, const char *proc_root, const char *sys_block)
{
	memset(h, 0, sizeof(*h));
	h->proc_root = proc_root;
	h->sys_block = sys_block;
}

static FILE *open_proc(const struct host_sampler *h, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", h->proc_root, name);
	return fopen(path, "re");
}

static int read_cpu(const struct host_sampler *h, uint64_t cpu[8])
{
	FILE *f = open_proc(h, "stat");
	unsigned long long v[8] = {0};
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	for (int i = 0; i < 8; i++)
		cpu[i] = v[i];
	return n >= 4 ? 0 : -1;
}

/* Whole disks only (partitions would count twice): those under /sys/block. */
static void read_disks(const struct host_sampler *h, struct host_counters *c)
{
	FILE *f = open_proc(h, "diskstats");
	char line[512], name[64], path[320];
	struct stat st;

	c->disk_read_bytes = c->disk_write_bytes = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long rd_sectors, wr_sectors;
		/* major minor name reads merged sectors ms writes merged sectors ... */
		if (sscanf(line, "%*u %*u %63s %*u %*u %llu %*u %*u %*u %llu", name, &rd_sectors,
			   &wr_sectors) != 3)
			continue;
		if (!strncmp(name, "loop", 4) || !strncmp(name, "ram", 3))
			continue;
		snprintf(path, sizeof(path), "%s/%s", h->sys_block, name);
		if (stat(path, &st) != 0)
			continue;
		c->disk_read_bytes += rd_sectors * 512;
		c->disk_write_bytes += wr_sectors * 512;
	}
	if (f)
		fclose(f);
}

static void read_net(const struct host_sampler *h, struct host_counters *c)
{
	FILE *f = open_proc(h, "net/dev");
	char line[512];

	c->net_rx_bytes = c->net_tx_bytes = 0;
	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		unsigned long long rx, tx;
		if (!colon)
			continue;
		*colon = '\0';
		char *name = line + strspn(line, " ");
		if (strcmp(name, "lo") == 0)
			continue;
		if (sscanf(colon + 1, "%llu %*u %*u %*u %*u %*u %*u %*u %llu", &rx, &tx) == 2) {
			c->net_rx_bytes += rx;
			c->net_tx_bytes += tx;
		}
	}
	if (f)
		fclose(f);
}

static void read_memory(const struct host_sampler *h, struct host_sample_row *out)
{
	FILE *f = open_proc(h, "meminfo");
	char line[256];
	unsigned long long v, swap_total = 0, swap_free = 0;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemTotal: %llu", &v) == 1)
			out->mem_total_kb = v;
		else if (sscanf(line, "MemAvailable: %llu", &v) == 1)
			out->mem_available_kb = v;
		else if (sscanf(line, "SwapTotal: %llu", &v) == 1)
			swap_total = v;
		else if (sscanf(line, "SwapFree: %llu", &v) == 1)
			swap_free = v;
	}
	if (f)
		fclose(f);
	out->swap_used_kb = swap_total > swap_free ? swap_total - swap_free : 0;
	f = open_proc(h, "loadavg");
	if (f) {
		if (fscanf(f, "%lf", &out->load1) != 1)
			out->load1 = 0;
		fclose(f);
	}
}

static uint64_t delta(uint64_t now, uint64_t before)
{
	return now >= before ? now - before : 0;
}

int host_sample(struct host_sampler *h, int64_t now_epoch_ns, struct host_sample_row *out)
{
	struct host_counters c = {0};
	uint64_t total = 0;

	if (read_cpu(h, c.cpu) != 0)
		return 0;
	read_disks(h, &c);
	read_net(h, &c);
	c.mono_ns = now_monotonic_ns();
	c.valid = true;
	if (!h->prev.valid) {
		h->prev = c;
		return 0;
	}
	memset(out, 0, sizeof(*out));
	uint64_t d[8];
	for (int i = 0; i < 8; i++) {
		d[i] = delta(c.cpu[i], h->prev.cpu[i]);
		total += d[i];
	}
	out->ts_epoch_ns = now_epoch_ns;
	out->interval_ns = (int64_t)(c.mono_ns - h->prev.mono_ns);
	out->cpus = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	if (total) {
		double t = (double)total;
		out->cpu_user_pct = 100.0 * (double)(d[0] + d[1]) / t;
		out->cpu_system_pct = 100.0 * (double)(d[2] + d[5] + d[6]) / t;
		out->cpu_iowait_pct = 100.0 * (double)d[4] / t;
		out->cpu_steal_pct = 100.0 * (double)d[7] / t;
		out->cpu_busy_pct = 100.0 - 100.0 * (double)(d[3] + d[4]) / t;
	}
	out->disk_read_bytes = delta(c.disk_read_bytes, h->prev.disk_read_bytes);
	out->disk_write_bytes = delta(c.disk_write_bytes, h->prev.disk_write_bytes);
	out->net_rx_bytes = delta(c.net_rx_bytes, h->prev.net_rx_bytes);
	out->net_tx_bytes = delta(c.net_tx_bytes, h->prev.net_tx_bytes);
	read_memory(h, out);
	h->prev = c;
	return 1;
}
