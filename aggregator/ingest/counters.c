/* From the kernel's running totals to what one image of a process used. */
#include "aggregator/ingest/internal.h"

#include "aggregator/ingest/cputime.h"

struct raw_counters raw_counters_from(const Tracer__Counters *c)
{
	struct raw_counters r = {0};

	if (!c)
		return r;
	r.utime_ns = c->utime_ns;
	r.stime_ns = c->stime_ns;
	r.runtime_ns = c->runtime_ns;
#define COPY(name) r.name = c->name;
	DELTA_COUNTERS(COPY)
#undef COPY
	return r;
}

static uint64_t minus(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

void metrics_set_presence(struct proc_metrics *m, const Tracer__Counters *c)
{
	m->has_iowait = c && c->has_iowait_ns;
	m->has_reclaim = c && c->has_reclaim_ns;
	m->has_net = c && c->has_net_tx_bytes;
	m->has_sys = c && c->has_sys_file;
	m->has_net_wait = c && c->has_net_wait_ns;
	m->net_wait_peer_family = c ? c->net_wait_peer_family : 0;
	m->net_wait_peer_port = c ? c->net_wait_peer_port : 0;
}

void metrics_between(const struct raw_counters *end, const struct raw_counters *base,
		     struct proc_metrics *m)
{
	cputime_adjust(minus(end->utime_ns, base->utime_ns), minus(end->stime_ns, base->stime_ns),
		       minus(end->runtime_ns, base->runtime_ns), &m->cpu_user_ns, &m->cpu_sys_ns);
#define DIFFERENCE(name) m->name = minus(end->name, base->name);
	DELTA_COUNTERS(DIFFERENCE)
#undef DIFFERENCE
}
