/* From the kernel's running totals to what one image of a process used. */
#include "aggregator/ingest/internal.h"

#include "aggregator/cputime.h"

struct raw_counters raw_counters_from(const Tracer__Counters *c)
{
	struct raw_counters r = {0};

	if (!c)
		return r;
	r.utime = c->utime_ns;
	r.stime = c->stime_ns;
	r.runtime = c->runtime_ns;
	r.nvcsw = c->vol_ctxsw;
	r.nivcsw = c->invol_ctxsw;
	r.min_flt = c->min_faults;
	r.maj_flt = c->maj_faults;
	r.rchar = c->rchar;
	r.wchar = c->wchar;
	r.syscr = c->syscr;
	r.syscw = c->syscw;
	r.read_bytes = c->read_bytes;
	r.write_bytes = c->write_bytes;
	r.cancelled_write_bytes = c->cancelled_write_bytes;
	r.run_delay = c->run_delay_ns;
	r.iowait = c->iowait_ns;
	r.reclaim = c->reclaim_ns;
	r.net_tx = c->net_tx_bytes;
	r.net_rx = c->net_rx_bytes;
	r.sys_file = c->sys_file;
	r.sys_net = c->sys_net;
	r.sys_mem = c->sys_mem;
	r.sys_proc = c->sys_proc;
	r.sys_other = c->sys_other;
	r.sys_failed = c->sys_failed;
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
}

void metrics_between(const struct raw_counters *end, const struct raw_counters *base,
		     struct proc_metrics *m)
{
	cputime_adjust(minus(end->utime, base->utime), minus(end->stime, base->stime),
		       minus(end->runtime, base->runtime), &m->cpu_user_ns, &m->cpu_sys_ns);
	m->vol_ctxsw = minus(end->nvcsw, base->nvcsw);
	m->invol_ctxsw = minus(end->nivcsw, base->nivcsw);
	m->min_faults = minus(end->min_flt, base->min_flt);
	m->maj_faults = minus(end->maj_flt, base->maj_flt);
	m->rchar = minus(end->rchar, base->rchar);
	m->wchar = minus(end->wchar, base->wchar);
	m->syscr = minus(end->syscr, base->syscr);
	m->syscw = minus(end->syscw, base->syscw);
	m->read_bytes = minus(end->read_bytes, base->read_bytes);
	m->write_bytes = minus(end->write_bytes, base->write_bytes);
	m->cancelled_write_bytes = minus(end->cancelled_write_bytes, base->cancelled_write_bytes);
	m->runq_ns = minus(end->run_delay, base->run_delay);
	m->iowait_ns = minus(end->iowait, base->iowait);
	m->reclaim_ns = minus(end->reclaim, base->reclaim);
	m->net_tx_bytes = minus(end->net_tx, base->net_tx);
	m->net_rx_bytes = minus(end->net_rx, base->net_rx);
	m->sys_file = minus(end->sys_file, base->sys_file);
	m->sys_net = minus(end->sys_net, base->sys_net);
	m->sys_mem = minus(end->sys_mem, base->sys_mem);
	m->sys_proc = minus(end->sys_proc, base->sys_proc);
	m->sys_other = minus(end->sys_other, base->sys_other);
	m->sys_failed = minus(end->sys_failed, base->sys_failed);
}
