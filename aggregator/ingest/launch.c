/* Runs started by a `tracer run` launcher: recognised at its exec, ended with its command. */
#include "aggregator/ingest/internal.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aggregator/ingest/runmark.h"
#include "common/fileutil.h"
#include "common/log.h"
#include "common/strutil.h"
#include "common/timeutil.h"

static void default_run_name(const struct runmark *mark, uint64_t epoch_ns, char *out, size_t size)
{
	time_t secs = (time_t)(epoch_ns / NSEC_PER_SEC);
	struct tm tm;
	char stamp[32];

	gmtime_r(&secs, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(out, size, "%s-%s", mark->command[0] ? mark->command : "run", stamp);
}

static struct run *start_run(struct ingest *g, struct proc *launcher, const struct runmark *mark)
{
	struct run_row row = {0};
	char name[RUNMARK_NAME_MAX + 32];
	struct run *r;

	if (mark->run[0])
		copy_string(name, sizeof(name), mark->run);
	else
		default_run_name(mark, (uint64_t)launcher->row.start_epoch_ns, name, sizeof(name));
	row.id = g->store->next_run_id++;
	row.name = strdup(name);
	row.pipeline = mark->pipeline[0] ? strdup(mark->pipeline) : NULL;
	copy_string(row.host_id, sizeof(row.host_id), g->host_id);
	copy_string(row.hostname, sizeof(row.hostname), g->hostname);
	copy_string(row.arch, sizeof(row.arch), g->machine);
	copy_string(row.boot_id, sizeof(row.boot_id), g->boot_id);
	row.launcher_pid = launcher->pid;
	row.launcher_start_boot_ns = launcher->start_boot_ns;
	r = correlate_explicit_run(&g->corr, &row);
	if (!r) {
		free(row.name);
		free(row.pipeline);
		return NULL;
	}
	r->refs++; /* held by the launcher entry */
	log_info("run %lld '%s' started by tracer run (pid %u)", (long long)r->row.id, name,
		 launcher->pid);
	return r;
}

void launch_join_run(struct ingest *g, struct proc *child, struct proc *launcher)
{
	struct run *r = launcher->life.launched;

	correlate_join(&g->corr, child, r);
	if (!r->tracer_run.has_command) {
		r->tracer_run.has_command = true;
		r->tracer_run.command_pid = child->pid;
		r->tracer_run.command_start_boot_ns = child->start_boot_ns;
		r->tracer_run.command_coarse = child->start_coarse;
		r->row.command_process_id = child->row.id;
		r->row.start_epoch_ns = child->row.start_epoch_ns;
		r->dirty = true;
	}
}

/*
 * A self-hosted `tracer run` forks its own daemons before its command: seen
 * by other daemons (the installed ones), its first child was taken for the
 * command at fork, and is a daemon at exec. The command is its next child.
 */
void launch_not_the_command(struct run *r, const struct proc *p)
{
	if (!r->tracer_run.has_command || r->tracer_run.command_pid != p->pid ||
	    !proc_same_start(r->tracer_run.command_start_boot_ns, r->tracer_run.command_coarse,
			     p->start_boot_ns, p->start_coarse))
		return;
	r->tracer_run.has_command = false;
	r->tracer_run.command_pid = 0;
	r->row.command_process_id = 0;
	r->dirty = true;
}

void launch_note_launcher(struct ingest *g, struct proc *p, char *const *argv, size_t argc)
{
	struct runmark mark;

	if (p->life.launched || !runmark_parse(p->row.exe, argv, argc, &mark))
		return;
	/* A `tracer run` outside the recorded cgroup subtree is not a run here. */
	if (!correlate_in_scope(&g->corr, &p->row))
		return;
	/* Our own launcher is known by pid and start; any other must be the installed tracer. */
	if (!g->own_launcher && !g->launcher_trusted(p->row.exe)) {
		g->stats.untrusted_launchers++;
		return;
	}
	/* Another `tracer run` on the host: its own daemons record it, not ours. */
	if (g->own_launcher &&
	    (p->pid != g->own_launcher_pid ||
	     !proc_same_start(p->start_boot_ns, true, g->own_launcher_start_boot_ns, true))) {
		g->stats.foreign_launchers++;
		return;
	}
	/* The launcher itself is not part of the run it starts. */
	p->life.launched = start_run(g, p, &mark);
}

void launch_abandon(struct run *r)
{
	r->finished = true;
	if (r->tracer_run.abandoned)
		return;
	log_info("run %lld '%s': its tracer run ended before starting a command; not kept",
		 (long long)r->row.id, r->row.name ? r->row.name : "?");
	r->tracer_run.abandoned = true;
	r->dirty = true;
}

/*
 * The launcher waits for its command, so the command's end comes first. When
 * it never came (the command ended while no collector watched), the launcher's
 * exit status is the command's (tracer run exits with it): the run ends there.
 */
static void end_with_launcher(struct ingest *g, struct run *r, const struct proc *launcher)
{
	const struct process_row *l = &launcher->row;

	log_warn("run %lld '%s': its command's end was not seen (no collector watched it); "
		 "ended with its tracer run's exit status",
		 (long long)r->row.id, r->row.name ? r->row.name : "?");
	r->row.end_epoch_ns = l->end_epoch_ns;
	r->row.has_exit_code = l->has_exit_code;
	r->row.exit_code = l->exit_code;
	r->row.has_signal = l->has_signal;
	r->row.signal = l->signal;
	r->status = l->has_signal ? GROUP_KILLED : l->exit_code ? GROUP_FAILED : GROUP_OK;
	r->dirty = true;
	correlate_run_ending(&g->corr, r);
	insight_run_end(&g->insight, r, l->end_epoch_ns);
}

void launch_end_launcher(struct ingest *g, struct proc *launcher)
{
	struct run *r = launcher->life.launched;

	if (!r->tracer_run.has_command) {
		launch_abandon(r);
		return;
	}
	r->finished = true;
	if (r->status != GROUP_RUNNING)
		return;
	/* A launcher killed while its command runs on: the command's own end will come. */
	struct proc *cmd =
	    proc_find(&g->table, r->tracer_run.command_pid, r->tracer_run.command_start_boot_ns,
		      r->tracer_run.command_coarse);
	if (cmd && !cmd->life.exited)
		return;
	end_with_launcher(g, r, launcher);
}

void launch_finish_command(struct ingest *g, struct proc *p)
{
	for (struct run *r = g->corr.runs; r; r = r->next) {
		if (!r->tracer_run.has_command || r->tracer_run.command_pid != p->pid ||
		    !proc_same_start(r->tracer_run.command_start_boot_ns,
				     r->tracer_run.command_coarse, p->start_boot_ns,
				     p->start_coarse))
			continue;
		failed_tool_settle(&r->failed, &r->last_failed, p->row.has_signal, p->row.signal,
				   p->row.exit_code);
		r->row.end_epoch_ns = p->row.end_epoch_ns;
		r->row.has_exit_code = p->row.has_exit_code;
		r->row.exit_code = p->row.exit_code;
		r->row.has_signal = p->row.has_signal;
		r->row.signal = p->row.signal;
		/* Ended by SIGPIPE: its reader had all it wanted, as in a step. */
		bool pipe_end = p->row.has_signal && p->row.signal == SIGPIPE;
		r->status = p->row.has_signal && !pipe_end ? GROUP_KILLED
			    : p->row.exit_code		   ? GROUP_FAILED
							   : GROUP_OK;
		r->dirty = true;
		correlate_run_ending(&g->corr, r);
		insight_run_end(&g->insight, r, p->row.end_epoch_ns);
	}
}

void ingest_orphaned(struct ingest *g, int64_t now_epoch_ns)
{
	if (!g->own_launcher)
		return;
	for (struct run *r = g->corr.runs; r; r = r->next) {
		if (r->source != RUN_EXPLICIT || r->status != GROUP_RUNNING ||
		    r->tracer_run.abandoned)
			continue;
		log_warn("run %lld '%s': its tracer run was killed and our daemons stop with it; "
			 "its command's end will not be seen: the run ends as unknown",
			 (long long)r->row.id, r->row.name ? r->row.name : "?");
		r->row.end_epoch_ns = now_epoch_ns; /* watched until now */
		r->status = GROUP_UNKNOWN;
		r->finished = true;
		r->dirty = true;
	}
}
