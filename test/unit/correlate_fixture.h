/*
 * The correlation tests' fixture: a correlator on a fresh store, and process
 * entries made by hand (test_correlate*.c, test_batch.c, test_containers.c,
 * test_script_steps.c). Define CORRELATE_FIXTURE_TAG (the database's name)
 * and, for more than 32 entries, CORRELATE_FIXTURE_PROCS before including it,
 * after cmocka.h.
 */
#ifndef TRACER_TEST_CORRELATE_FIXTURE_H
#define TRACER_TEST_CORRELATE_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/correlate/correlate.h"
#include "aggregator/model/proctable.h"
#include "aggregator/store/store.h"
#include "test/unit/tmpdb.h"

#ifndef CORRELATE_FIXTURE_PROCS
#define CORRELATE_FIXTURE_PROCS 32
#endif

#define MS 1000000LL

static struct store st;
static struct correlator corr;
static char db_path[64];
static struct proc procs[CORRELATE_FIXTURE_PROCS];
static size_t n_procs;

/* A correlator on a fresh database; deny: a tools.deny file, or NULL. */
static inline int fixture_open(const char *deny)
{
	tmpdb_fresh(db_path, sizeof(db_path), CORRELATE_FIXTURE_TAG);
	assert_int_equal(store_open(&st, db_path), 0);
	assert_int_equal(correlator_init(&corr, &st, NULL, deny), 0);
	memset(procs, 0, sizeof(procs));
	n_procs = 0;
	return 0;
}

static inline int setup(void **state)
{
	(void)state;
	return fixture_open(NULL);
}

static inline int teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < n_procs; i++) {
		correlate_release(&procs[i]);
		process_row_free_strings(&procs[i].row);
	}
	correlator_free(&corr);
	store_close(&st);
	tmpdb_remove(db_path);
	return 0;
}

static inline size_t argv_count(const char *const *argv)
{
	size_t n = 0;

	while (argv[n])
		n++;
	return n;
}

/* argv (NULL-terminated) as the row's JSON text, allocated. */
static inline char *argv_json(const char *const *argv)
{
	char json[512] = "[";

	for (size_t i = 0; argv[i]; i++)
		snprintf(json + strlen(json), sizeof(json) - strlen(json), "%s\"%s\"", i ? "," : "",
			 argv[i]);
	strcat(json, "]");
	return strdup(json);
}

/* A new entry: pid, a child of parent (NULL: of init) from start_ms, running exe
 * in cwd. Not yet forked into the correlator: the caller sets the rest first. */
static inline struct proc *proc_entry(uint32_t pid, const struct proc *parent, uint64_t start_ms,
				      const char *exe, const char *cwd)
{
	assert_true(n_procs < CORRELATE_FIXTURE_PROCS);
	struct proc *p = &procs[n_procs++];

	p->pid = pid;
	p->start_boot_ns = start_ms * MS;
	p->row.id = pid;
	p->row.pid = pid;
	p->row.ppid = parent ? parent->pid : 1;
	p->row.proc_start_boot_ns = p->start_boot_ns;
	p->row.start_epoch_ns = (int64_t)p->start_boot_ns;
	p->row.exe = strdup(exe);
	p->row.cwd = strdup(cwd);
	p->row.state = "running";
	return p;
}

/* A process running exe with argv (NULL-terminated), started at start_ms, forked. */
static inline struct proc *process(uint32_t pid, struct proc *parent, uint64_t start_ms,
				   const char *exe, const char *const *argv)
{
	struct proc *p = proc_entry(pid, parent, start_ms, exe, "/w");

	p->row.argv_json = argv_json(argv);
	correlate_fork(&corr, p, parent);
	return p;
}

/* p, its row as the caller set it (argv "[]"), forked from parent into the
 * correlator, then execing argv at its start. */
static inline struct proc *fork_exec(struct proc *p, struct proc *parent, const char *const *argv)
{
	p->row.argv_json = strdup("[]");
	correlate_fork(&corr, p, parent);
	correlate_exec(&corr, p, parent, (char *const *)argv, argv_count(argv),
		       p->row.start_epoch_ns);
	return p;
}

/* The process exits after cpu_ms of CPU with the exit code. */
static inline void finish(struct proc *p, uint64_t end_ms, uint64_t cpu_ms, int code)
{
	p->row.end_epoch_ns = (int64_t)(end_ms * MS);
	p->row.state = "exited";
	p->row.has_exit_code = true;
	p->row.exit_code = code;
	p->row.has_metrics = true;
	p->row.m.cpu_user_ns = cpu_ms * MS;
	p->life.exited = true;
	correlate_exit(&corr, p);
}

#endif
