/*
 * Signals about steps: the tool that failed one, a step slower than its
 * history, a retry of a failed step and what changed; and each step's
 * character (where its processes' time went).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/insight/insight.h"
#include "aggregator/insight/raise.h"
#include "common/character.h"

static struct step *step_by_id(struct run *r, int64_t id)
{
	for (struct step *s = r->steps; s; s = s->next)
		if (s->id == id)
			return s;
	return NULL;
}

/* A signal about step s at at_ns: its kind and severity, its run and step, its main tool. */
static void step_row(struct signal_row *sig, const char *kind, const char *severity,
		     const struct step *s, int64_t at_ns, int64_t now_ns)
{
	memset(sig, 0, sizeof(*sig));
	sig->kind = kind;
	sig->severity = severity;
	sig->detected_epoch_ns = now_ns;
	sig->at_epoch_ns = at_ns;
	sig->run_id = s->run->row.id;
	sig->step_id = s->id;
	sig->tool_id = s->main_tool_id;
}

static void outcome(const struct step *s, char *out, size_t size)
{
	double wall = s->r.end_epoch_ns > s->r.start_epoch_ns
			  ? (double)(s->r.end_epoch_ns - s->r.start_epoch_ns) / 1e9
			  : 0;
	double peak = (double)rollup_peak_rss(&s->r) / 1024.0;

	if (s->status == GROUP_KILLED && s->has_signal)
		snprintf(out, size, "killed by signal %d after %.0f s, peak %.0f MiB", s->signal,
			 wall, peak);
	else if (s->status == GROUP_FAILED)
		snprintf(out, size, "exit %d after %.0f s, peak %.0f MiB", s->exit_code, wall,
			 peak);
	else
		snprintf(out, size, "%s after %.0f s, peak %.0f MiB",
			 s->status == GROUP_OK ? "succeeded" : "running", wall, peak);
}

/*
 * Engines that re-run a failed job (Snakemake retries, Nextflow errorStrategy,
 * Toil, cwltool); a script that runs a command twice is a loop, not a retry,
 * and so is a Slurm batch script running an `srun` again. A Slurm requeue is
 * not told apart from a new job given the same id (docs/insight.md).
 */
static bool engine_retries(const struct run *r)
{
	static const char *const engines[] = {"snakemake", "nextflow", "cwltool", "toil"};

	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
		if (!strcmp(r->engine, engines[i]))
			return true;
	return false;
}

/*
 * The same job as o: by the job's identity where the engine shows one (Toil's
 * job id, a Snakemake job's command and work dir), since an attempt that
 * failed early ran other programs than the retry; else by the argv of the
 * program that named both.
 */
static bool same_job(const struct step *s, const struct step *o)
{
	if (s->identity || o->identity)
		return s->identity && o->identity && !strcmp(s->identity, o->identity);
	return s->signature && o->signature && !strcmp(s->signature, o->signature);
}

void insight_step_named(struct insight *in, struct step *s, int64_t now_ns)
{
	struct signal_row sig;
	char was[160];

	if ((!s->signature && !s->identity) || s->retry_of || !engine_retries(s->run))
		return;
	for (struct step *o = s->run->steps; o; o = o->next) {
		/* The status first: a run's thousands of steps mostly did not fail. */
		if (o == s || (o->status != GROUP_FAILED && o->status != GROUP_KILLED) ||
		    !same_job(s, o))
			continue;
		s->retry_of = o->id;
		outcome(o, was, sizeof(was));
		step_row(&sig, "retried", "info", s, s->r.start_epoch_ns, now_ns);
		sig.active = true;
		snprintf(sig.message, sizeof(sig.message),
			 "step '%.100s' is a retry of step %lld, which failed (%s)",
			 s->name[0] ? s->name : s->key, (long long)o->id, was);
		s->watch.retry_signal_id = insight_raise(in, &sig);
		return;
	}
}

static void finish_retry(struct insight *in, struct step *s)
{
	struct signal_row *sig = insight_active(in, s->watch.retry_signal_id);
	struct step *prev = step_by_id(s->run, s->retry_of);
	char was[160], now[160];

	s->watch.retry_signal_id = 0;
	if (!sig)
		return;
	outcome(s, now, sizeof(now));
	if (prev) {
		outcome(prev, was, sizeof(was));
		snprintf(sig->message, sizeof(sig->message),
			 "step '%.100s' was retried: the first attempt %s; the retry %s", s->name,
			 was, now);
		snprintf(
		    sig->details, sizeof(sig->details),
		    "{\"previous_step\":%lld,\"previous_peak_rss_kb\":%lld,\"peak_rss_kb\":%lld,"
		    "\"previous_wall_s\":%.3f,\"wall_s\":%.3f,\"previous_status\":\"%s\","
		    "\"status\":\"%s\"}",
		    (long long)prev->id, (long long)rollup_peak_rss(&prev->r),
		    (long long)rollup_peak_rss(&s->r),
		    (double)(prev->r.end_epoch_ns - prev->r.start_epoch_ns) / 1e9,
		    (double)(s->r.end_epoch_ns - s->r.start_epoch_ns) / 1e9,
		    group_status_name(prev->status), group_status_name(s->status));
	}
	sig->active = false;
	insight_update(in, sig);
}

static void tool_failed(struct insight *in, struct step *s, int64_t now_ns)
{
	struct signal_row sig;

	step_row(&sig, "tool_failed", "critical", s, s->r.end_epoch_ns, now_ns);
	if (s->failed.process_id) {
		sig.process_id = s->failed.process_id;
		sig.tool_id = s->failed.tool_id;
		sig.has_value = true;
		sig.value = s->failed.code;
		sig.unit = s->failed.has_signal ? "signal" : "exit code";
		snprintf(sig.message, sizeof(sig.message), "%s %s %d and failed step '%s' (%s %s)",
			 s->failed.name,
			 s->failed.has_signal ? "was killed by signal" : "exited with",
			 s->failed.code, s->name, s->kind, s->key);
	} else {
		sig.process_id = s->root_process_id;
		sig.tool_id = 0; /* no tool ended it */
		sig.has_value = true;
		sig.value = s->has_signal ? s->signal : s->exit_code;
		sig.unit = s->has_signal ? "signal" : "exit code";
		/* No tool ended this way: the step's own process (a job's shell) chose it. */
		if (s->has_signal)
			snprintf(sig.message, sizeof(sig.message),
				 "step '%s' (%s %s) failed: its root was killed by signal %d",
				 s->name, s->kind, s->key, s->signal);
		else
			snprintf(sig.message, sizeof(sig.message),
				 "step '%s' (%s %s) failed: it exited with %d, which no tool in it "
				 "returned (the step's own script or wrapper chose it)",
				 s->name, s->kind, s->key, s->exit_code);
	}
	sig.active = true; /* its run decides: a run that went on and succeeded handled it */
	insight_settle_after_run(&sig, s->run);
	insight_raise(in, &sig);
}

/* Peak memory close to the cgroup's limit: the next input may not fit. */
static void near_limit(struct insight *in, struct step *s, int64_t now_ns)
{
	int64_t peak = rollup_peak_rss(&s->r);
	struct signal_row sig;

	if (s->memory_limit_kb <= 0 || peak <= 0 ||
	    (double)peak < in->cfg.near_limit_share * (double)s->memory_limit_kb)
		return;
	step_row(&sig, "memory_pressure", "warning", s, s->r.end_epoch_ns, now_ns);
	sig.has_value = sig.has_threshold = true;
	sig.value = (double)peak / (double)s->memory_limit_kb;
	sig.threshold = in->cfg.near_limit_share;
	sig.unit = "share of the memory limit";
	snprintf(sig.message, sizeof(sig.message),
		 "step '%.100s' peaked at %.0f MiB, %.0f%% of its cgroup's %.0f MiB memory limit",
		 s->name, (double)peak / 1024.0, 100.0 * sig.value,
		 (double)s->memory_limit_kb / 1024.0);
	snprintf(sig.details, sizeof(sig.details),
		 "{\"peak_rss_kb\":%lld,\"memory_limit_kb\":%lld}", (long long)peak,
		 (long long)s->memory_limit_kb);
	insight_raise(in, &sig);
}

void insight_step_end(struct insight *in, struct step *s, int64_t now_ns)
{
	struct signal_row sig;

	if (s->watch.end_reported)
		return;
	s->watch.end_reported = true;
	if (group_failed(s->status))
		tool_failed(in, s, now_ns);
	insight_step_verdicts(in, s);
	int64_t wall = s->r.end_epoch_ns - s->r.start_epoch_ns;
	struct signal_row *slow = insight_active(in, s->watch.slow_signal_id);
	s->watch.slow_signal_id = 0;
	if (slow) {
		if (insight_slow(in, s, wall, &sig)) {
			sig.id = slow->id;
			sig.detected_epoch_ns = slow->detected_epoch_ns;
		} else {
			sig = *slow; /* it caught up: keep what was seen, closed */
		}
		sig.active = false;
		*slow = sig;
		insight_update(in, slow);
	} else if (s->status == GROUP_OK && insight_slow(in, s, wall, &sig)) {
		sig.detected_epoch_ns = now_ns;
		insight_raise(in, &sig);
	}
	if (s->retry_of)
		finish_retry(in, s);
	near_limit(in, s, now_ns);
}

/*
 * A run that failed with no step failed, or a script that went on past every
 * failed step (no cause among them): the tool that failed it, at the run's level.
 */
static void run_failed(struct insight *in, struct run *r, const struct step *cause, int64_t now_ns)
{
	struct signal_row sig;

	if (!insight_run_is_script(r) || cause)
		for (struct step *s = r->steps; s; s = s->next)
			if (group_failed(s->status))
				return; /* that step's tool_failed says it */
	insight_row_begin(&sig, "tool_failed", "critical", r->row.id, now_ns, r->row.end_epoch_ns);
	sig.has_value = true;
	if (r->failed.process_id) {
		sig.process_id = r->failed.process_id;
		sig.tool_id = r->failed.tool_id;
		sig.value = r->failed.code;
		sig.unit = r->failed.has_signal ? "signal" : "exit code";
		snprintf(sig.message, sizeof(sig.message), "%s %s %d and failed run '%.100s'",
			 r->failed.name,
			 r->failed.has_signal ? "was killed by signal" : "exited with",
			 r->failed.code, r->row.name ? r->row.name : "?");
	} else {
		sig.process_id = r->row.command_process_id;
		sig.value = r->row.has_signal ? r->row.signal : r->row.exit_code;
		sig.unit = r->row.has_signal ? "signal" : "exit code";
		snprintf(sig.message, sizeof(sig.message), "run '%.100s' failed: its command %s %d",
			 r->row.name ? r->row.name : "?",
			 r->row.has_signal ? "was killed by signal" : "exited with",
			 (int)sig.value);
	}
	insight_raise(in, &sig);
}

void insight_run_end(struct insight *in, struct run *r, int64_t now_ns)
{
	if (r->watch.end_reported)
		return;
	r->watch.end_reported = true;
	bool failed = group_failed(r->status);
	if (failed)
		insight_pipefail_cause(in, r, now_ns);
	/* After the pipefail cause, which may make a step the cause. */
	const struct step *cause =
	    r->status != GROUP_OK && insight_run_is_script(r) ? insight_script_cause(in, r) : NULL;
	if (failed)
		run_failed(in, r, cause, now_ns);
	insight_run_verdicts(in, r, cause);
}

/* Where the step's process time went (common/character.c has the rule). */
const char *insight_character(const struct rollup *r)
{
	struct time_parts t = {r->cpu_ns,  r->iowait_ns,  r->net_wait_ns,
			       r->runq_ns, r->reclaim_ns, r->sleep_ns};

	return time_character(&t);
}
