/*
 * Failure signals from finished processes, OOM kills and finished steps.
 * Every signal is one row in `signals`, raised once; those that describe an
 * ongoing condition (stalled, slower than usual) stay `active` until it ends
 * and are rewritten then with the final numbers.
 */
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/insight/insight.h"
#include "aggregator/insight/raise.h"
#include "common/timeutil.h"
#include "common/strutil.h"

void insight_config_defaults(struct insight_config *cfg)
{
	cfg->stall_ns = 60 * NSEC_PER_SEC;
	cfg->io_wait_min_ns = 10 * NSEC_PER_SEC;
	cfg->io_wait_share = 0.3;
	cfg->net_wait_min_ns = 10 * NSEC_PER_SEC;
	cfg->net_wait_share = 0.3;
	cfg->runq_min_ns = 10 * NSEC_PER_SEC;
	cfg->runq_share = 0.3;
	cfg->reclaim_min_ns = 1 * NSEC_PER_SEC;
	cfg->near_limit_share = 0.9;
	cfg->slow_factor = 2.0;
	cfg->slow_min_extra_ns = 60 * NSEC_PER_SEC;
	cfg->slow_min_history = 3;
}

int insight_init(struct insight *in, struct store *store, const struct insight_config *cfg)
{
	memset(in, 0, sizeof(*in));
	in->cfg = *cfg;
	in->store = store;
	in->next_id = store_max_signal_id(store) + 1;
	return in->next_id > 0 ? 0 : -1;
}

void insight_free(struct insight *in)
{
	for (size_t i = 0; i < in->n_history; i++)
		free(in->history[i].name);
	free(in->history);
	free(in->pending);
	free(in->active);
	memset(in, 0, sizeof(*in));
}

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static void set_details(struct signal_row *s, json_t *obj)
{
	char *text = obj ? json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	copy_string(s->details, sizeof(s->details), text ? text : "");
	free(text);
	json_decref(obj);
}

static void base_row(struct signal_row *s, const char *kind, const char *severity,
		     const struct proc *p, int64_t now_ns)
{
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->severity = severity;
	s->detected_epoch_ns = now_ns;
	if (p) {
		s->run_id = p->row.run_id;
		s->step_id = p->row.step_id;
		s->process_id = p->row.id;
		s->tool_id = p->row.tool_id;
	}
}

/* A warning about a process that has ended: its value against the threshold, in unit. */
static void measured_row(struct signal_row *s, const char *kind, const struct proc *p,
			 int64_t now_ns, double value, double threshold, const char *unit)
{
	base_row(s, kind, "warning", p, now_ns);
	s->at_epoch_ns = p->row.end_epoch_ns;
	s->has_value = s->has_threshold = true;
	s->value = value;
	s->threshold = threshold;
	s->unit = unit;
}

/* A wait that took share or more of a process's wall time: "prog (pid) spent N% of its
 * wall time (S s) doing (moved)". */
static void wall_share_row(struct signal_row *s, const char *kind, const struct proc *p,
			   int64_t now_ns, uint64_t wait_ns, uint64_t wall, double share,
			   const char *prog, const char *doing, const char *moved)
{
	measured_row(s, kind, p, now_ns, (double)wait_ns / (double)wall, share,
		     "share of wall time");
	snprintf(s->message, sizeof(s->message),
		 "%s (pid %u) spent %.0f%% of its wall time (%.1f s) %s (%s)", prog, p->row.pid,
		 100.0 * s->value, secs(wait_ns), doing, moved);
}

static void check_killed(struct insight *in, const struct proc *p, int64_t now_ns)
{
	const struct process_row *r = &p->row;
	char prog[64];
	struct signal_row s;

	/* SIGPIPE: a producer whose reader stopped reading (`| head`): how pipes end. */
	if (!r->has_signal || r->signal == SIGPIPE)
		return;
	proc_program_name(p, prog, sizeof(prog));
	/* Whether it mattered is known when its step (or run) ends: insight_kill_verdicts. */
	base_row(&s, "killed", "warning", p, now_ns);
	s.active = true;
	s.at_epoch_ns = r->end_epoch_ns;
	s.has_value = true;
	s.value = r->signal;
	s.unit = "signal";
	char sender[96] = "";
	if (r->killed_by_pid)
		snprintf(sender, sizeof(sender), ", sent by %s (pid %u)", r->killed_by_comm,
			 r->killed_by_pid);
	snprintf(s.message, sizeof(s.message), "%s (pid %u) was killed by signal %d (%s)%s%s%s",
		 prog, r->pid, r->signal, strsignal(r->signal) ? strsignal(r->signal) : "?",
		 r->oom_killed ? ", chosen by the kernel's OOM killer" : "", sender,
		 r->core_dumped ? ", core dumped" : "");
	json_t *details =
	    json_pack("{s:i, s:b, s:f}", "signal", r->signal, "oom_killed", r->oom_killed, "wall_s",
		      secs((uint64_t)(r->end_epoch_ns - r->start_epoch_ns)));
	if (details && r->killed_by_pid)
		json_object_set_new(details, "killed_by",
				    json_pack("{s:i, s:s}", "pid", (int)r->killed_by_pid, "comm",
					      r->killed_by_comm));
	set_details(&s, details);
	insight_settle_after_run(&s, p->in.run);
	insight_raise(in, &s);
}

static void check_waits(struct insight *in, const struct proc *p, int64_t now_ns)
{
	const struct process_row *r = &p->row;
	const struct proc_metrics *m = &r->m;
	const struct insight_config *cfg = &in->cfg;
	char prog[64];
	struct signal_row s;

	if (!r->has_metrics || r->helper || r->end_epoch_ns <= r->start_epoch_ns)
		return;
	proc_program_name(p, prog, sizeof(prog));
	uint64_t wall = (uint64_t)(r->end_epoch_ns - r->start_epoch_ns);
	uint64_t cpu = m->cpu_user_ns + m->cpu_sys_ns;

	if (m->has_iowait && m->iowait_ns >= cfg->io_wait_min_ns &&
	    (double)m->iowait_ns >= cfg->io_wait_share * (double)wall) {
		char moved[96];
		snprintf(moved, sizeof(moved), "read %.1f MiB, wrote %.1f MiB from storage",
			 (double)m->read_bytes / 1048576.0, (double)m->write_bytes / 1048576.0);
		wall_share_row(&s, "io_wait", p, now_ns, m->iowait_ns, wall, cfg->io_wait_share,
			       prog, "waiting on disk I/O", moved);
		set_details(&s,
			    json_pack("{s:f, s:f, s:I, s:I}", "iowait_s", secs(m->iowait_ns),
				      "wall_s", secs(wall), "read_bytes", (json_int_t)m->read_bytes,
				      "write_bytes", (json_int_t)m->write_bytes));
		insight_raise(in, &s);
	}
	if (m->runq_ns >= cfg->runq_min_ns &&
	    (double)m->runq_ns >= cfg->runq_share * (double)(m->runq_ns + cpu)) {
		measured_row(&s, "cpu_contention", p, now_ns,
			     (double)m->runq_ns / (double)(m->runq_ns + cpu), cfg->runq_share,
			     "share of runnable time");
		snprintf(
		    s.message, sizeof(s.message),
		    "%s (pid %u) waited %.1f s for a CPU while runnable (%.0f%% of the time it "
		    "wanted to run): the CPUs were oversubscribed",
		    prog, r->pid, secs(m->runq_ns), 100.0 * s.value);
		set_details(
		    &s, json_pack("{s:f, s:f}", "runq_s", secs(m->runq_ns), "cpu_s", secs(cpu)));
		insight_raise(in, &s);
	}
	if (m->has_reclaim && m->reclaim_ns >= cfg->reclaim_min_ns) {
		measured_row(&s, "memory_pressure", p, now_ns, secs(m->reclaim_ns),
			     secs(cfg->reclaim_min_ns), "s");
		snprintf(s.message, sizeof(s.message),
			 "%s (pid %u) spent %.1f s reclaiming memory before it could allocate "
			 "(peak %.0f MiB): memory pressure",
			 prog, r->pid, s.value, (double)m->max_rss_kb / 1024.0);
		set_details(&s, json_pack("{s:f, s:I}", "reclaim_s", s.value, "max_rss_kb",
					  (json_int_t)m->max_rss_kb));
		insight_raise(in, &s);
	}
}

/* The peer of the longest wait, as "IPv4 port 443", or "" when not known. */
static void peer_text(const struct proc_metrics *m, char *out, size_t size)
{
	const char *family = m->net_wait_peer_family == 2    ? "IPv4"
			     : m->net_wait_peer_family == 10 ? "IPv6"
							     : NULL;

	if (family && m->net_wait_peer_port)
		snprintf(out, size, ", longest wait on %s port %u", family, m->net_wait_peer_port);
	else
		out[0] = '\0';
}

static void check_network_wait(struct insight *in, const struct proc *p, int64_t now_ns)
{
	const struct process_row *r = &p->row;
	const struct proc_metrics *m = &r->m;
	const struct insight_config *cfg = &in->cfg;
	char prog[64], peer[64];
	struct signal_row s;

	if (!r->has_metrics || r->helper || r->end_epoch_ns <= r->start_epoch_ns ||
	    !m->has_net_wait)
		return;
	uint64_t wall = (uint64_t)(r->end_epoch_ns - r->start_epoch_ns);
	if (m->net_wait_ns < cfg->net_wait_min_ns ||
	    (double)m->net_wait_ns < cfg->net_wait_share * (double)wall)
		return;
	proc_program_name(p, prog, sizeof(prog));
	peer_text(m, peer, sizeof(peer));
	char moved[160];
	snprintf(moved, sizeof(moved), "received %.1f MiB, sent %.1f MiB%s",
		 (double)m->net_rx_bytes / 1048576.0, (double)m->net_tx_bytes / 1048576.0, peer);
	wall_share_row(&s, "network_wait", p, now_ns, m->net_wait_ns, wall, cfg->net_wait_share,
		       prog, "blocked on the network", moved);
	json_t *d = json_pack(
	    "{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:I}", "net_wait_s", secs(m->net_wait_ns),
	    "wall_s", secs(wall), "receive_s", secs(m->net_wait_recv_ns), "send_s",
	    secs(m->net_wait_send_ns), "connect_s", secs(m->net_wait_connect_ns), "accept_s",
	    secs(m->net_wait_accept_ns), "poll_s", secs(m->net_wait_poll_ns), "rx_bytes",
	    (json_int_t)m->net_rx_bytes, "tx_bytes", (json_int_t)m->net_tx_bytes);
	if (d && m->net_wait_peer_family)
		json_object_set_new(d, "peer",
				    json_pack("{s:i, s:i}", "family", (int)m->net_wait_peer_family,
					      "port", (int)m->net_wait_peer_port));
	set_details(&s, d);
	insight_raise(in, &s);
}

void insight_process_exit(struct insight *in, struct proc *p, int64_t now_ns)
{
	if (!p->row.run_id)
		return; /* signals are about tracked work */
	insight_stall_end(in, p, now_ns);
	check_killed(in, p, now_ns);
	check_waits(in, p, now_ns);
	check_network_wait(in, p, now_ns);
}

void insight_oom(struct insight *in, const struct oom_row *oom, const struct proc *p,
		 int64_t now_ns)
{
	struct signal_row s;
	char prog[64];
	uint64_t rss = oom->anon_rss_kb + oom->file_rss_kb + oom->shmem_rss_kb;

	if (p && !p->row.run_id)
		return;
	if (p)
		proc_program_name(p, prog, sizeof(prog));
	else
		copy_string(prog, sizeof(prog), oom->comm);
	base_row(&s, "oom_kill", "critical", p, now_ns);
	s.at_epoch_ns = oom->ts_epoch_ns;
	s.has_value = true;
	s.value = (double)rss;
	s.unit = "KiB";
	if (oom->memcg_limit_kb) {
		s.has_threshold = true;
		s.threshold = (double)oom->memcg_limit_kb;
		snprintf(s.message, sizeof(s.message),
			 "%s (pid %u) was killed by the kernel's OOM killer at %.0f MiB resident: "
			 "its memory cgroup limit is %.0f MiB (%.0f MiB in use)",
			 prog, oom->pid, (double)rss / 1024.0, (double)oom->memcg_limit_kb / 1024.0,
			 (double)oom->memcg_usage_kb / 1024.0);
	} else {
		snprintf(s.message, sizeof(s.message),
			 "%s (pid %u) was killed by the kernel's OOM killer at %.0f MiB resident: "
			 "the host ran out of memory",
			 prog, oom->pid, (double)rss / 1024.0);
	}
	set_details(&s, json_pack("{s:I, s:I, s:I, s:I, s:I}", "anon_rss_kb",
				  (json_int_t)oom->anon_rss_kb, "file_rss_kb",
				  (json_int_t)oom->file_rss_kb, "memcg_limit_kb",
				  (json_int_t)oom->memcg_limit_kb, "memcg_usage_kb",
				  (json_int_t)oom->memcg_usage_kb, "total_vm_kb",
				  (json_int_t)oom->total_vm_kb));
	insight_raise(in, &s);
}

static struct step *step_of_run(struct run *r, int64_t id)
{
	for (struct step *s = r->steps; s; s = s->next)
		if (s->id == id)
			return s;
	return NULL;
}

static void handled(struct insight *in, struct signal_row *s, const char *what)
{
	size_t n = strlen(s->message);

	s->severity = "info";
	snprintf(s->message + n, sizeof(s->message) - n, "; handled: the %s went on and succeeded",
		 what);
	s->active = false;
	insight_update(in, s); /* moves the last active signal here */
}

/*
 * The verdicts of a step's kills once it ended: a step that succeeded handled
 * them (info). A failed step's kills and its tool_failed wait for its run.
 */
void insight_step_verdicts(struct insight *in, struct step *st)
{
	if (st->status != GROUP_OK)
		return;
	for (size_t i = 0; i < in->n_active;) {
		struct signal_row *s = &in->active[i];
		if (!strcmp(s->kind, "killed") && s->run_id == st->run->row.id &&
		    s->step_id == st->id)
			handled(in, s, "step");
		else
			i++;
	}
}

/* Whether a step ended as its run did: a script's status is its last command's. */
static bool ended_alike(const struct step *st, const struct run *r)
{
	if ((!st->has_signal && !st->has_exit_code) ||
	    (!r->row.has_signal && !r->row.has_exit_code))
		return false;
	return exit_passes_on(st->has_signal, st->has_signal ? st->signal : st->exit_code,
			      r->row.has_signal, r->row.signal, r->row.exit_code);
}

/*
 * The step whose failure the run ended with: the one holding the tool that
 * failed the run (correlate.c settles it), else the last failed step that
 * ended as the run did. NULL when none did.
 */
static struct step *cause_step(struct insight *in, struct run *r)
{
	struct step *last = NULL;

	for (struct step *st = r->steps; st; st = st->next) {
		if (!group_failed(st->status))
			continue;
		if (r->failed.process_id && st->failed.process_id == r->failed.process_id)
			return st;
		if (ended_alike(st, r) && (!last || st->r.end_epoch_ns > last->r.end_epoch_ns))
			last = st;
	}
	for (size_t i = 0; !last && r->failed.process_id && i < in->n_active; i++) {
		const struct signal_row *s = &in->active[i];
		if (s->run_id == r->row.id && s->process_id == r->failed.process_id && s->step_id)
			last = step_of_run(r, s->step_id);
	}
	return last;
}

/* Whether the run started another step (or a helper, `sort` of a few ms) after
 * st ended: its script went on past st. */
static bool went_on_after(const struct run *r, const struct step *st)
{
	if (r->last_helper_start_epoch_ns >= st->r.end_epoch_ns)
		return true;
	for (const struct step *s = r->steps; s; s = s->next)
		if (s != st && s->r.start_epoch_ns >= st->r.end_epoch_ns)
			return true;
	return false;
}

/*
 * A script whose status no failed step ended with chose it itself (its `exit
 * 4`, or a builtin's). Its last failed step is still the cause when nothing
 * ran after it (`tool || exit 4`); once the script ran another step after
 * every failure (`ls /x; sort y; exit 4`), it went on past them all, and its
 * own status is the cause: NULL then.
 */
struct step *insight_script_cause(struct insight *in, struct run *r)
{
	struct step *cause = cause_step(in, r), *last = NULL;

	if (cause)
		return cause;
	for (struct step *st = r->steps; st; st = st->next)
		if (group_failed(st->status) &&
		    (!last || st->r.end_epoch_ns > last->r.end_epoch_ns))
			last = st;
	return last && !went_on_after(r, last) ? last : NULL;
}

/*
 * A script under `set -o pipefail` whose pipeline's producer was ended by
 * SIGPIPE fails with 128 + SIGPIPE though no tool failed (`find | head`): that
 * step is the run's cause. Returns it when no failed step ended as the run did.
 */
static struct step *pipefail_step(struct insight *in, struct run *r)
{
	struct step *last = NULL;

	if (r->row.has_signal || !r->row.has_exit_code || r->row.exit_code != 128 + SIGPIPE ||
	    strcmp(r->engine, "script") || cause_step(in, r))
		return NULL;
	for (struct step *st = r->steps; st; st = st->next)
		if (st->has_signal && st->signal == SIGPIPE && st->root_process_id &&
		    (!last || st->r.end_epoch_ns > last->r.end_epoch_ns))
			last = st;
	return last;
}

/*
 * The step a pipefail script failed on is killed (its root was, by SIGPIPE),
 * with its root as the tool that failed it, and a critical `killed` says why.
 */
void insight_pipefail_cause(struct insight *in, struct run *r, int64_t now_ns)
{
	struct step *st = pipefail_step(in, r);
	struct signal_row s;

	if (!st)
		return;
	st->status = GROUP_KILLED;
	st->failed = (struct failed_tool){.process_id = st->root_process_id,
					  .tool_id = st->main_tool_id,
					  .has_signal = true,
					  .code = SIGPIPE};
	copy_string(st->failed.name, sizeof(st->failed.name), st->name);
	step_mark_dirty(st);
	insight_row_begin(&s, "killed", "critical", r->row.id, now_ns, st->r.end_epoch_ns);
	s.step_id = st->id;
	s.process_id = st->root_process_id;
	s.tool_id = st->main_tool_id;
	s.has_value = true;
	s.value = SIGPIPE;
	s.unit = "signal";
	snprintf(s.message, sizeof(s.message),
		 "%.100s (pid %u) was ended by SIGPIPE (its reader stopped reading) and the script "
		 "exited with it (%d): under `set -o pipefail` that fails the pipeline",
		 st->name, st->root_pid, 128 + SIGPIPE);
	set_details(&s, json_pack("{s:i, s:b}", "signal", SIGPIPE, "pipefail", 1));
	insight_raise(in, &s);
}

/* details gains "went_on_past": true, which `explain` lists apart. */
static void mark_went_on_past(struct signal_row *s)
{
	json_t *obj = s->details[0] ? json_loads(s->details, 0, NULL) : NULL;

	if (!json_is_object(obj)) {
		json_decref(obj);
		obj = json_object();
	}
	json_object_set_new(obj, "went_on_past", json_true());
	set_details(s, obj);
	s->severity = "warning";
	size_t n = strlen(s->message);
	snprintf(s->message + n, sizeof(s->message) - n, "; the run went on past it");
}

/*
 * The verdicts of a run's failures once it ended. A run that succeeded handled
 * every failure in it (a script's `|| true`, an engine's retry): info. In a
 * failed run, tool_failed stays critical, and a kill is critical if its
 * process is what failed its step or the run, else a warning. A script's exit
 * status is its last command's (a Slurm batch job's, its batch script's): a
 * step that failed before the step the script ended with is one the script
 * went on past (`wait $! || true`, an `srun` whose status nothing checked), a
 * warning; an engine's failed jobs all fail it, whenever they ended.
 */
void insight_run_verdicts(struct insight *in, struct run *r, const struct step *cause)
{
	bool script = r->status != GROUP_OK && insight_run_is_script(r);

	for (size_t i = 0; i < in->n_active;) {
		struct signal_row *s = &in->active[i];
		bool ours = s->run_id == r->row.id &&
			    (!strcmp(s->kind, "killed") || !strcmp(s->kind, "tool_failed"));
		if (!ours) {
			i++;
			continue;
		}
		if (r->status == GROUP_OK) {
			handled(in, s, "run");
			continue;
		}
		struct step *st = step_of_run(r, s->step_id);
		if (!strcmp(s->kind, "killed")) {
			bool is_cause = s->process_id == r->failed.process_id ||
					(st && s->process_id == st->failed.process_id);
			s->severity = is_cause ? "critical" : "warning";
		}
		/* No cause among the steps: the script went on past every one. */
		if (script && st && st != cause &&
		    (!cause || st->r.end_epoch_ns <= cause->r.end_epoch_ns))
			mark_went_on_past(s);
		s->active = false;
		insight_update(in, s);
	}
}
