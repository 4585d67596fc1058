/*
 * rowbench [ROWS] [ROUNDS]: what writing one process row costs the aggregator,
 * through its own store code (store_write_process, PROCESS_BATCH rows per
 * INSERT, a commit every 330 rows as in an exec storm of ~1,700 processes a
 * second committed every 200 ms), into a fresh database with tracer's schema.
 * Rows are shaped like a storm's /bin/true (metrics, argv, cwd; no container,
 * Slurm or unit). Each index of the processes table is then dropped in turn,
 * and all four together, to show what each costs; the rest is SQLite's floor
 * for a 64-column row. CPU time of this process (user + system), median and
 * interquartile range of the rounds, in µs per row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aggregator/store/store.h"
#include "common/log.h"

#define COMMIT_EVERY 330

static double cpu_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void storm_row(struct process_row *r, int64_t i)
{
	static char argv[] = "[\"/bin/true\"]";
	static char exe[] = "/usr/bin/true";
	static char cwd[] = "/work/main";

	memset(r, 0, sizeof(*r));
	r->run_id = 1;
	r->parent_id = 11;
	r->pid = (uint32_t)(20000 + i % 30000);
	r->ppid = 24718;
	r->start_epoch_ns = 1795952300489109523 + i * 1000;
	r->end_epoch_ns = r->start_epoch_ns + 1000000;
	r->proc_start_boot_ns = 12452354064433 + (uint64_t)i * 1000;
	strcpy(r->boot_id, "e31b8d4b616540e5be992f4ef22d1d32");
	strcpy(r->comm, "true");
	r->exe = exe;
	r->argv_json = argv;
	r->cwd = cwd;
	r->has_ids = true;
	r->cgroup_id = 19934;
	r->state = "exited";
	r->has_exit_code = true;
	r->has_metrics = true;
	r->m.cpu_user_ns = 1086557 + (uint64_t)(i % 97);
	r->m.max_rss_kb = 1004;
	r->m.has_max_rss = true;
	r->m.ru_maxrss_kb = 1004;
	r->m.rchar = 3980;
	r->m.syscr = 8;
	r->m.min_faults = 64;
	r->m.runq_ns = 12198 + (uint64_t)(i % 13);
	r->m.has_iowait = r->m.has_reclaim = r->m.has_net = true;
	r->step_id = 4;
	r->tool_id = 9;
}

/* The database of a round and its WAL files, gone. */
static void remove_db(const char *dir)
{
	static const char *const suffixes[] = {"", "-wal", "-shm"};
	char path[300];

	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/rows.db%s", dir, suffixes[i]);
		unlink(path);
	}
}

/* CPU µs per row writing rows rows into a new database, less the indexes in drop. */
static double one_round(const char *dir, int rows, const char *drop)
{
	char path[256], sql[512];
	struct store s;
	struct process_row *r = calloc((size_t)rows, sizeof(*r));

	snprintf(path, sizeof(path), "%s/rows.db", dir);
	remove_db(dir);
	if (!r || store_open(&s, path) != 0) {
		fprintf(stderr, "rowbench: cannot open %s\n", path);
		exit(1);
	}
	if (drop) {
		char stmt[512];
		snprintf(stmt, sizeof(stmt), "%s", drop);
		for (char *name = strtok(stmt, ","); name; name = strtok(NULL, ",")) {
			snprintf(sql, sizeof(sql), "DROP INDEX %s", name);
			if (sqlite3_exec(s.db, sql, NULL, NULL, NULL) != SQLITE_OK) {
				fprintf(stderr, "rowbench: %s: %s\n", sql, sqlite3_errmsg(s.db));
				exit(1);
			}
		}
	}
	for (int i = 0; i < rows; i++) {
		storm_row(&r[i], i);
		r[i].id = s.next_process_id++;
	}
	double t0 = cpu_seconds();
	store_begin(&s);
	for (int i = 0; i < rows; i++) {
		if (store_write_process(&s, &r[i], false) != 0) {
			fprintf(stderr, "rowbench: write failed\n");
			exit(1);
		}
		if ((i + 1) % COMMIT_EVERY == 0) {
			store_flush_processes(&s);
			store_commit(&s);
			store_begin(&s);
		}
	}
	store_flush_processes(&s);
	store_commit(&s);
	double us = (cpu_seconds() - t0) * 1e6 / rows;
	store_close(&s);
	free(r);
	return us;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int rows = argc > 1 ? atoi(argv[1]) : 20000;
	int rounds = argc > 2 ? atoi(argv[2]) : 9;
	char dir[] = "/tmp/rowbench-XXXXXX";
	static const char *const variants[][2] = {
	    {"every index (as shipped)", NULL},
	    {"without processes_parent", "processes_parent"},
	    {"without processes_pid", "processes_pid"},
	    {"without processes_run", "processes_run"},
	    {"without processes_step", "processes_step"},
	    {"without all four", "processes_parent,processes_pid,processes_run,processes_step"},
	};
	const int n_variants = (int)(sizeof(variants) / sizeof(variants[0]));
	double us[16][64];

	log_init("rowbench");
	log_set_level_name("error"); /* not a migration line per round */
	if (rows < COMMIT_EVERY || rounds < 1 || rounds > 64 || !mkdtemp(dir)) {
		fprintf(stderr, "usage: rowbench [ROWS >= %d] [ROUNDS 1..64]\n", COMMIT_EVERY);
		return 2;
	}
	/* Rounds alternate the variants, so a drift of the machine touches them all alike. */
	for (int k = 0; k < rounds; k++)
		for (int v = 0; v < n_variants; v++)
			us[v][k] = one_round(dir, rows, variants[v][1]);
	printf("| processes table | µs per row | IQR |\n|---|---|---|\n");
	for (int v = 0; v < n_variants; v++) {
		qsort(us[v], (size_t)rounds, sizeof(double), by_value);
		printf("| %s | %.2f | %.2f .. %.2f |\n", variants[v][0], us[v][rounds / 2],
		       us[v][rounds / 4], us[v][(3 * rounds) / 4]);
	}
	remove_db(dir);
	rmdir(dir);
	return 0;
}
