/*
 * Runs and steps in memory, with their rollups: the model correlate/ builds
 * and insight/ reads. A run or step is freed once it is finished and no
 * process entry points at it any more (refcounts).
 */
#ifndef TRACER_GROUPS_H
#define TRACER_GROUPS_H

#include <stdbool.h>
#include <stdint.h>

#include "aggregator/store/store.h"
#include "common/strmap.h"

/* Totals and peaks over a group of processes (a step or a run). */
struct rollup {
	/*
	 * On the wall clock of the first member seen (clock_offset_ns, epoch minus
	 * boot clock): a member that started under another offset, because the
	 * wall clock was stepped, is moved onto it, so the span is boot-clock exact.
	 */
	int64_t start_epoch_ns, end_epoch_ns;
	int64_t clock_offset_ns;
	bool has_clock;
	uint32_t processes, failed, live;
	uint32_t images; /* every image of every member: an exec ends an image, not a process */
	uint64_t cpu_ns, rchar, wchar, read_bytes, write_bytes, net_tx_bytes, net_rx_bytes,
	    iowait_ns, runq_ns;
	uint64_t reclaim_ns;
	NET_WAIT_COUNTERS(NET_WAIT_FIELD)
	/* Wall time leaf processes (those that started no children) spent neither
	 * on a CPU nor waiting for one, for I/O, for memory or on the
	 * network: sleeping on something else (a lock, a pipe, a timer, a child). */
	uint64_t sleep_ns;
	uint64_t max_process_rss_kb;
	/* Peak of the sum over concurrent processes, from samples. */
	int64_t rss_now_kb, peak_rss_kb;
	/* CPU cores in use: summed over one sampling pass, the highest pass. */
	int64_t pass_boot_ns;
	double pass_cores, peak_cores;
};

/* A member started at start_epoch_ns on the wall clock of clock_offset_ns. */
void rollup_start(struct rollup *r, int64_t start_epoch_ns, int64_t clock_offset_ns);
/*
 * An image of a member ended (an exec replaced it, or the process exited):
 * add what it used. A leaf started no children: its time off the CPU is its
 * own waiting, not waiting for them.
 */
void rollup_add_image(struct rollup *r, const struct process_row *image, int64_t clock_offset_ns,
		      bool leaf);
/* CPU a finished member used after its exit was counted (its exit path). */
void rollup_add_cpu(struct rollup *r, int64_t cpu_ns);
/* A member process finished: count it, and add its last image. */
void rollup_add_process(struct rollup *r, const struct process_row *last_image,
			int64_t clock_offset_ns, bool failed, bool leaf);
/* A member's sample: its RSS changed by rss_delta_kb, it used cores since the last one. */
void rollup_sample(struct rollup *r, int64_t ts_ns, int64_t rss_delta_kb, double cores);
double rollup_avg_cores(const struct rollup *r);
/* The peak cores to report: from samples, never below the average. */
double rollup_peak_cores(const struct rollup *r);
/* The peak RSS to report: from samples, never below the largest single process. */
int64_t rollup_peak_rss(const struct rollup *r);
/* The totals columns to store for the group. */
void rollup_totals(const struct rollup *r, struct totals_row *t);

/* GROUP_UNKNOWN: ended unseen (its `tracer run` and daemons stopped while it ran on). */
enum group_status { GROUP_RUNNING, GROUP_OK, GROUP_FAILED, GROUP_KILLED, GROUP_UNKNOWN };
const char *group_status_name(enum group_status s);

static inline bool group_failed(enum group_status s)
{
	return s == GROUP_FAILED || s == GROUP_KILLED;
}

/*
 * How a run was recognised: named by the user (`tracer run`), an engine's
 * process, a script a user started, or a Slurm job's cgroup. Script and
 * Slurm runs are weak: stronger evidence inside them starts a run of its own.
 */
enum run_source { RUN_EXPLICIT, RUN_ENGINE, RUN_SCRIPT, RUN_SLURM };
/* As stored in runs.source. */
const char *run_source_name(enum run_source s);
/* From runs.source; anything unknown is RUN_EXPLICIT. */
enum run_source run_source_parse(const char *name);

/*
 * A tool (not a shell, wrapper or helper) that failed in a step or run:
 * exited non-zero or was killed, SIGPIPE aside (a producer whose reader
 * stopped reading, as `| head` does, has not failed). `failed` is the first
 * one until the group ends; then the one that failed it: the last that ended
 * as the group did (the same exit code: a `set -e` script, a wrapper passing
 * its tool's code on; the same signal; or exit code 128 + its signal: a shell
 * reporting its child's death), else the first.
 */
struct failed_tool {
	int64_t process_id, tool_id; /* process_id 0: none */
	bool has_signal;
	int code; /* exit code, or signal if has_signal */
	char name[64];
	uint32_t parent_pid; /* the process that started it (start 0: unknown) */
	uint64_t parent_start_boot_ns;
};

/* The process (pid, start) went on past a failure of its child: it exec'd its
 * next program or exited 0 (a shim's failed lookup, `grep -q x f || sort f`).
 * Such a failure was handled: it is neither `first` nor `last`. */
void failed_tool_went_on(struct failed_tool *first, struct failed_tool *last, uint32_t pid,
			 uint64_t start_boot_ns);
/* The group ended with this exit: keep as `first` the tool that failed it. A tool
 * failing on the way (a shim's readlink, a handled grep) is not the cause. */
void failed_tool_settle(struct failed_tool *first, const struct failed_tool *last, bool has_signal,
			int signal, int exit_code);
/* Whether an exit passes an earlier one on (was_code: its exit code, or its
 * signal if was_signal): the same signal, the same exit code, or exit code
 * 128 + its signal (a shell reporting its child's death). */
bool exit_passes_on(bool was_signal, int was_code, bool has_signal, int signal, int exit_code);
/* Whether an exit is the tool's own passed on (exit_passes_on). */
bool failed_tool_ended_alike(const struct failed_tool *t, bool has_signal, int signal,
			     int exit_code);

struct run;

/* CPU and wall time of a script step's finished images run by one tool
 * (correlate/step_work.c): the tool that did most of the work names it. */
struct step_tool_time {
	int64_t tool_id;
	const char *name; /* kept by the correlator's tool names */
	char *argv;	  /* of its first image: the step's signature once it names it */
	uint64_t cpu_ns, wall_ns;
};
#define STEP_TOOLS_MAX 8

/* Who named a step, and whether that holds. Writers: correlate/, ingest/resume.c. */
struct step_naming {
	bool named; /* name given by the engine (rule, process): keep it */
	/* Named after a tool: a sibling forked earlier (the head of a shell pipeline
	 * whose exec lost the race) takes the name over, so the name is stable. */
	bool named_by_tool;
	uint32_t namer_pid, namer_ppid;
	uint64_t namer_fork_boot_ns;
};

/* Script steps: time by tool (beyond STEP_TOOLS_MAX, in the totals only).
 * Writers: correlate/step_work.c. */
struct step_work {
	struct step_tool_time tools[STEP_TOOLS_MAX];
	unsigned n_tools;
	uint64_t tools_cpu_ns, tools_wall_ns;
};

/* What the insight layer keeps of a step it watches. Writers: insight/. */
struct step_watch {
	bool end_reported;	 /* the insight layer saw it finish */
	int64_t slow_signal_id;	 /* an active slower_than_usual signal */
	int64_t retry_signal_id; /* an active retried signal */
};

/*
 * A step. correlate/ writes what is not in an owned sub-struct; ingest/resume.c
 * rebuilds steps from the database at start, ingest/launch.c ends a `tracer run`'s
 * (test/lint/owners.py checks the sub-structs only: these names are not unique).
 */
struct step {
	struct step *next; /* in the run's list */
	struct run *run;
	int64_t id;
	char key[96];
	char name[256];
	char kind[24];
	struct step_naming naming;
	int64_t root_process_id;
	uint32_t root_pid;
	uint64_t root_start_boot_ns;
	enum group_status status;
	bool has_exit_code, has_signal;
	int exit_code, signal;
	char container_id[80];
	char slurm_job[32], slurm_step[24];
	int64_t memory_limit_kb; /* of its cgroup when it started; 0: none */
	double cpu_limit;	 /* CPUs its cgroup allows; 0: unlimited or unknown */
	char *signature;	 /* argv of the process that named it (retries share it) */
	/* The job it ran, as the engine shows it (Toil's job id; a Snakemake job's
	 * command and work dir): an attempt of the same job is a retry. NULL: none. */
	char *identity;
	char engine_job[128]; /* the engine's own job id (Toil), "" if none */
	struct rollup r;
	unsigned refs;
	bool dirty;		 /* on its run's dirty_steps: step_mark_dirty() sets it */
	struct step *dirty_next; /* on its run's dirty_steps */
	struct step_watch watch;
	int64_t retry_of; /* the failed step this one repeats, 0 if none */
	int64_t main_tool_id;
	struct failed_tool failed; /* the tool that failed it (correlate.c) */
	struct failed_tool last_failed;
	const char *character; /* compute, io, memory, network, contended, waiting */
	struct step_work work;
	char command[72]; /* its root's argv, cut, if the root exec'd */
	/* A helper that ended in a few ms ($(date)): its processes are the
	 * script's own; the store forgets it (forget_pending), then it is freed. */
	bool dissolved, forget_pending;
	int64_t outbox_mark; /* the outbox's newest record when it began: its rows come later */
	bool linked; /* holds a batch submitter or container CLI: jobs and containers point at it */
};

/* What the insight layer keeps of a run it watches. Writers: insight/. */
struct run_watch {
	bool end_reported; /* the insight layer saw it finish */
};

/* The command a `tracer run` launcher started (runs of other sources have none).
 * Writers: ingest/launch.c, ingest/resume.c. */
struct run_command {
	bool has_command;
	/* Its launcher ended before starting a command (it refused, or was killed):
	 * nothing ran, so no run is kept (correlate_write deletes a written row). */
	bool abandoned;
	uint32_t command_pid;
	uint64_t command_start_boot_ns;
	bool command_coarse;
};

/* A run. correlate/ writes what is not in an owned sub-struct (as for struct step). */
struct run {
	struct run *next;
	struct run_row row;
	enum run_source source;
	char engine[16];
	int64_t pipeline_id;
	bool pipeline_guessed; /* named by us (from the engine or script), not by the user */
	int64_t engine_process_id;
	uint32_t engine_pid; /* 0: none */
	uint64_t engine_start_boot_ns;
	char slurm_job[32];	  /* a Slurm job run */
	char toil_job_store[256]; /* a Toil run's job store, as its workers name it */
	struct step *steps;
	struct step *dissolved;		    /* steps that turned out to be helpers (step_work.c) */
	int64_t last_helper_start_epoch_ns; /* the latest of those began: the script went on */
	/* Steps by key: every exec in an engine's run looks its step up, and a
	 * run gathers thousands (correlate_add_step keeps it). */
	struct strmap steps_by_key;
	bool steps_unindexed; /* memory ran out for the index: lookups scan */
	uint32_t step_seq;    /* for steps the engine does not number */
	/* Steps changed since the last commit: a commit writes these, not every
	 * step of the run (thousands in a workflow, at every commit). */
	struct step *dirty_steps;
	uint32_t n_steps; /* on steps */
	struct rollup r;
	enum group_status status;
	unsigned refs;
	bool dirty;
	bool finished;		   /* launcher or engine gone: free once unreferenced */
	struct failed_tool failed; /* the tool that failed it (correlate.c) */
	struct failed_tool last_failed;
	struct run_watch watch;
	struct run_command tracer_run;
};

/* The step changed: the next commit writes it. */
static inline void step_mark_dirty(struct step *s)
{
	if (s->dirty || s->dissolved)
		return;
	s->dirty = true;
	s->dirty_next = s->run->dirty_steps;
	s->run->dirty_steps = s;
}

#endif
