#include "cli/cost/idle.h"

#include "common/vec.h"

static bool add_period(struct idle_periods *out, int64_t from, int64_t to, const char *run)
{
	struct idle_period p = {.from_epoch_ns = from, .to_epoch_ns = to, .run_name = run};

	return vec_push(out, p);
}

int idle_host_periods(const struct host_tick *ticks, size_t n, double threshold_pct, int64_t min_ns,
		      struct idle_periods *out)
{
	int64_t from = 0, to = 0; /* the open period; from 0: none */

	for (size_t i = 0; i <= n; i++) {
		const struct host_tick *t = i < n ? &ticks[i] : NULL;
		bool idle = t && t->has_cpu && t->cpu_busy_pct < threshold_pct && !t->run_active;
		/* A period ends at a busy sample or a hole in the samples. */
		bool hole = t && t->ts_epoch_ns - t->interval_ns > to + t->interval_ns;
		if (from && (!idle || hole)) {
			if (to - from >= min_ns && !add_period(out, from, to, NULL))
				return -1;
			from = 0;
		}
		if (idle) {
			if (!from)
				from = t->ts_epoch_ns - t->interval_ns;
			to = t->ts_epoch_ns;
		}
	}
	return 0;
}

int idle_run_gaps(const struct run_step_span *spans, size_t n, int64_t min_ns,
		  struct idle_periods *out)
{
	size_t i = 0;

	while (i < n) {
		const struct run_step_span *run = &spans[i];
		int64_t covered = run->run_start_epoch_ns, end = run->run_end_epoch_ns;
		for (; i < n && spans[i].run_id == run->run_id; i++) {
			const struct run_step_span *s = &spans[i];
			int64_t step_end = s->step_running ? end : s->step_end_epoch_ns;
			if (s->step_start_epoch_ns - covered >= min_ns &&
			    !add_period(out, covered, s->step_start_epoch_ns, run->run_name))
				return -1;
			if (step_end > covered)
				covered = step_end;
		}
		if (end - covered >= min_ns && !add_period(out, covered, end, run->run_name))
			return -1;
	}
	return 0;
}

int64_t idle_total_ns(const struct idle_periods *p)
{
	int64_t ns = 0;

	for (size_t i = 0; i < p->n; i++)
		ns += p->items[i].to_epoch_ns - p->items[i].from_epoch_ns;
	return ns;
}

double idle_total_seconds(const struct idle_periods *p)
{
	double s = 0;

	for (size_t i = 0; i < p->n; i++)
		s += (double)(p->items[i].to_epoch_ns - p->items[i].from_epoch_ns) / 1e9;
	return s;
}
