#include "aggregator/model/groups.h"

#include <string.h>

static const char *const status_names[] = {"running", "ok", "failed", "killed", "unknown"};

const char *group_status_name(enum group_status s)
{
	return (unsigned)s < sizeof(status_names) / sizeof(*status_names) ? status_names[s]
									  : "running";
}

static const char *const source_names[] = {"explicit", "engine", "script", "slurm"};

const char *run_source_name(enum run_source s)
{
	return (unsigned)s < 4 ? source_names[s] : "explicit";
}

enum run_source run_source_parse(const char *name)
{
	for (unsigned i = 0; name && i < 4; i++)
		if (!strcmp(name, source_names[i]))
			return (enum run_source)i;
	return RUN_EXPLICIT;
}

/* t (0: unknown), read on the wall clock of offset, moved onto the rollup's clock. */
static int64_t on_rollup_clock(struct rollup *r, int64_t t, int64_t offset)
{
	if (!r->has_clock) {
		r->clock_offset_ns = offset;
		r->has_clock = true;
	}
	return t ? t - offset + r->clock_offset_ns : 0;
}

void rollup_start(struct rollup *r, int64_t start_epoch_ns, int64_t clock_offset_ns)
{
	start_epoch_ns = on_rollup_clock(r, start_epoch_ns, clock_offset_ns);
	if (!r->start_epoch_ns || (start_epoch_ns && start_epoch_ns < r->start_epoch_ns))
		r->start_epoch_ns = start_epoch_ns;
}

void rollup_add_image(struct rollup *r, const struct process_row *image, int64_t clock_offset_ns,
		      bool leaf)
{
	const struct proc_metrics *m = &image->m;
	int64_t end_epoch_ns = on_rollup_clock(r, image->end_epoch_ns, clock_offset_ns);

	r->images++;
	if (end_epoch_ns > r->end_epoch_ns)
		r->end_epoch_ns = end_epoch_ns;
	if (!image->has_metrics)
		return;
	r->cpu_ns += m->cpu_user_ns + m->cpu_sys_ns;
	r->rchar += m->rchar;
	r->wchar += m->wchar;
	r->read_bytes += m->read_bytes;
	r->write_bytes += m->write_bytes;
	r->net_tx_bytes += m->net_tx_bytes;
	r->net_rx_bytes += m->net_rx_bytes;
	r->iowait_ns += m->iowait_ns;
	r->runq_ns += m->runq_ns;
	r->reclaim_ns += m->reclaim_ns;
#define ADD_NET_WAIT(name) r->name += m->name;
	NET_WAIT_COUNTERS(ADD_NET_WAIT)
#undef ADD_NET_WAIT
	if (leaf && image->end_epoch_ns > image->start_epoch_ns) {
		uint64_t wall = (uint64_t)(image->end_epoch_ns - image->start_epoch_ns);
		uint64_t busy = m->cpu_user_ns + m->cpu_sys_ns + m->iowait_ns + m->runq_ns +
				m->reclaim_ns + m->net_wait_ns;
		if (wall > busy)
			r->sleep_ns += wall - busy;
	}
	if (m->has_max_rss && m->max_rss_kb > r->max_process_rss_kb)
		r->max_process_rss_kb = m->max_rss_kb;
}

void rollup_add_cpu(struct rollup *r, int64_t cpu_ns)
{
	if (cpu_ns >= 0)
		r->cpu_ns += (uint64_t)cpu_ns;
	else
		r->cpu_ns = r->cpu_ns > (uint64_t)-cpu_ns ? r->cpu_ns - (uint64_t)-cpu_ns : 0;
}

void rollup_add_process(struct rollup *r, const struct process_row *last_image,
			int64_t clock_offset_ns, bool failed, bool leaf)
{
	r->processes++;
	r->failed += failed;
	rollup_add_image(r, last_image, clock_offset_ns, leaf);
}

void rollup_sample(struct rollup *r, int64_t ts_ns, int64_t rss_delta_kb, double cores)
{
	r->rss_now_kb += rss_delta_kb;
	if (r->rss_now_kb < 0)
		r->rss_now_kb = 0;
	if (r->rss_now_kb > r->peak_rss_kb)
		r->peak_rss_kb = r->rss_now_kb;
	/* Samples of one pass share a timestamp: sum their cores per pass. */
	if (ts_ns != r->pass_boot_ns) {
		r->pass_boot_ns = ts_ns;
		r->pass_cores = 0;
	}
	r->pass_cores += cores;
	if (r->pass_cores > r->peak_cores)
		r->peak_cores = r->pass_cores;
}

double rollup_avg_cores(const struct rollup *r)
{
	int64_t wall = r->end_epoch_ns - r->start_epoch_ns;

	return wall > 0 ? (double)r->cpu_ns / (double)wall : 0.0;
}

/*
 * Sampled peaks are a lower bound: a step shorter than the sampling period, or
 * whose busy process lived between two samples, shows less than it used. The
 * average over the whole span is a lower bound too (some part of a span is at
 * least its average), so the larger of the two is the peak.
 */
double rollup_peak_cores(const struct rollup *r)
{
	double avg =
	    r->end_epoch_ns > r->start_epoch_ns && r->start_epoch_ns ? rollup_avg_cores(r) : 0.0;

	return r->peak_cores > avg ? r->peak_cores : avg;
}

int64_t rollup_peak_rss(const struct rollup *r)
{
	return r->peak_rss_kb > (int64_t)r->max_process_rss_kb ? r->peak_rss_kb
							       : (int64_t)r->max_process_rss_kb;
}

void rollup_totals(const struct rollup *r, struct totals_row *t)
{
	*t = (struct totals_row){
	    .processes = r->processes,
	    .images = r->images,
	    .failed = r->failed,
	    .cpu_ns = r->cpu_ns,
	    .has_avg_cores = r->end_epoch_ns > r->start_epoch_ns && r->start_epoch_ns,
	    .avg_cores = rollup_avg_cores(r),
	    .peak_cores = rollup_peak_cores(r),
	    .peak_rss_kb = rollup_peak_rss(r),
	    .max_process_rss_kb = r->max_process_rss_kb,
	    .rchar = r->rchar,
	    .wchar = r->wchar,
	    .read_bytes = r->read_bytes,
	    .write_bytes = r->write_bytes,
	    .net_tx_bytes = r->net_tx_bytes,
	    .net_rx_bytes = r->net_rx_bytes,
	    .iowait_ns = r->iowait_ns,
	    .runq_ns = r->runq_ns,
	    .reclaim_ns = r->reclaim_ns,
	    .sleep_ns = r->sleep_ns,
	    .net_wait_ns = r->net_wait_ns,
	    .net_wait_recv_ns = r->net_wait_recv_ns,
	    .net_wait_send_ns = r->net_wait_send_ns,
	    .net_wait_connect_ns = r->net_wait_connect_ns,
	    .net_wait_accept_ns = r->net_wait_accept_ns,
	    .net_wait_poll_ns = r->net_wait_poll_ns,
	};
}

bool exit_passes_on(bool was_signal, int was_code, bool has_signal, int signal, int exit_code)
{
	return has_signal   ? was_signal && was_code == signal
	       : was_signal ? exit_code == 128 + was_code
			    : exit_code == was_code;
}

bool failed_tool_ended_alike(const struct failed_tool *t, bool has_signal, int signal,
			     int exit_code)
{
	return t->process_id &&
	       exit_passes_on(t->has_signal, t->code, has_signal, signal, exit_code);
}

static bool started_by(const struct failed_tool *t, uint32_t pid, uint64_t start_boot_ns)
{
	return t->process_id && t->parent_start_boot_ns && t->parent_pid == pid &&
	       t->parent_start_boot_ns == start_boot_ns;
}

void failed_tool_went_on(struct failed_tool *first, struct failed_tool *last, uint32_t pid,
			 uint64_t start_boot_ns)
{
	if (started_by(last, pid, start_boot_ns))
		memset(last, 0, sizeof(*last));
	if (started_by(first, pid, start_boot_ns))
		*first = *last; /* the failure after it, if one was not handled too */
}

void failed_tool_settle(struct failed_tool *first, const struct failed_tool *last, bool has_signal,
			int signal, int exit_code)
{
	if (failed_tool_ended_alike(last, has_signal, signal, exit_code))
		*first = *last;
}
