/*
 * The argv of batch submitters, as their manuals document it (sbatch, srun,
 * salloc: Slurm; qsub: PBS Pro and Torque; bsub: LSF; `aws batch submit-job`),
 * and the argv a job's processes show of the engine inside the job
 * (Snakemake's cluster jobscript). Options are skipped by whether they take a
 * value, so the script or command after them is found.
 */
#include "aggregator/correlate/batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"

struct option_set {
	const char *short_with_value;  /* letters whose option takes a value */
	const char *const *long_flags; /* long options that take none (without '=') */
};

static const char *const slurm_long_flags[] = {"--wait",
					       "--parsable",
					       "--hold",
					       "--no-requeue",
					       "--requeue",
					       "--exclusive",
					       "--overcommit",
					       "--quiet",
					       "--verbose",
					       "--test-only",
					       "--get-user-env",
					       "--nice",
					       "--propagate",
					       "--spread-job",
					       "--use-min-nodes",
					       "--contiguous",
					       "--ignore-pbs",
					       "--no-kill",
					       "--oversubscribe",
					       "--reboot",
					       "--help",
					       "--usage",
					       "--version",
					       "--pty",
					       "--label",
					       "--unbuffered",
					       "--disable-status",
					       "--no-allocate",
					       "--kill-on-bad-exit",
					       "--immediate",
					       "--x11",
					       "--no-shell",
					       "--exact",
					       "--overlap",
					       "--whole",
					       "--mpi-pmix",
					       "--bell",
					       "--no-bell",
					       "--wait-all-nodes",
					       NULL};
static const struct option_set sbatch_opts = {"aAbBcCdDeFGiJLMmnNopqStwx", slurm_long_flags};
static const struct option_set srun_opts = {"aAbBcCdDeFGiJLMmnNopqrStTwWx", slurm_long_flags};
static const char *const no_long[] = {NULL};
static const struct option_set qsub_opts = {"aAcCdDeFjJklmMNoPpqrStuvWw", no_long};

static bool in_list(const char *const *list, const char *word)
{
	for (; *list; list++)
		if (!strcmp(*list, word))
			return true;
	return false;
}

/* argv[i] is an option: how many words it spans (1 or 2). */
static size_t option_words(const struct option_set *o, const char *a)
{
	if (a[1] == '-')
		return strchr(a, '=') || in_list(o->long_flags, a) ? 1 : 2;
	/* -J name, -Jname: a value attached to its letter is one word. */
	return strchr(o->short_with_value, a[1]) && a[2] == '\0' ? 2 : 1;
}

/* The value of -s/--long (either spelling, `--long=v` too), or NULL. */
static const char *opt_value(char *const *argv, size_t end, char s, const char *lng)
{
	size_t n = lng ? strlen(lng) : 0;

	for (size_t i = 1; i < end; i++) {
		const char *a = argv[i];
		if (s && a[0] == '-' && a[1] == s && a[2] == '\0')
			return i + 1 < end ? argv[i + 1] : NULL;
		if (s && a[0] == '-' && a[1] == s && a[2] != '-')
			return a + 2;
		if (lng && !strcmp(a, lng))
			return i + 1 < end ? argv[i + 1] : NULL;
		if (lng && !strncmp(a, lng, n) && a[n] == '=')
			return a + n + 1;
	}
	return NULL;
}

static bool has_flag(char *const *argv, size_t end, const char *a, const char *b)
{
	for (size_t i = 1; i < end; i++)
		if ((a && !strcmp(argv[i], a)) || (b && !strcmp(argv[i], b)))
			return true;
	return false;
}

/* The first word that is not an option (or after `--`): the script or command. */
static size_t first_operand(const struct option_set *o, char *const *argv, size_t argc)
{
	size_t i = 1;

	while (i < argc) {
		const char *a = argv[i];
		if (!strcmp(a, "--"))
			return i + 1;
		if (a[0] != '-' || a[1] == '\0')
			return i;
		i += option_words(o, a);
	}
	return argc;
}

/* dir made absolute against cwd ("" stays ""). */
static void absolute(const char *path, const char *cwd, char *out, size_t size)
{
	if (!path || !*path)
		out[0] = '\0';
	else if (path[0] == '/' || !cwd)
		copy_string(out, size, path);
	else
		snprintf(out, size, "%s/%s", cwd, path);
}

/* The words from `from` joined by spaces. */
static void join_words(char *const *argv, size_t from, size_t argc, char *out, size_t size)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = from; i < argc && used + 1 < size; i++)
		used +=
		    (size_t)snprintf(out + used, size - used, "%s%s", i > from ? " " : "", argv[i]);
}

/* <dir>/snakejob.<rule>.<id>.sh: Snakemake's cluster jobscript. */
static void snakemake_jobscript(struct batch_submit *out)
{
	const char *base = strrchr(out->script, '/');
	size_t n;

	base = base ? base + 1 : out->script;
	n = strlen(base);
	if (strncmp(base, "snakejob.", 9) != 0 || n < 13 || strcmp(base + n - 3, ".sh") != 0)
		return;
	const char *rule = base + 9;
	const char *id = base + n - 4;
	while (id > rule && *id != '.')
		id--;
	if (id == rule)
		return;
	snprintf(out->engine_rule, sizeof(out->engine_rule), "%.*s", (int)(id - rule), rule);
	snprintf(out->engine_job_id, sizeof(out->engine_job_id), "%.*s",
		 (int)(base + n - 3 - id - 1), id + 1);
	snprintf(out->engine_dir, sizeof(out->engine_dir), "%.*s", (int)(base - out->script - 1),
		 out->script);
}

static void slurm_submit(const char *program, char *const *argv, size_t argc, const char *cwd,
			 struct batch_submit *out)
{
	const struct option_set *o = strcmp(program, "sbatch") ? &srun_opts : &sbatch_opts;
	size_t op = first_operand(o, argv, argc);
	const char *dir = opt_value(argv, op, 'D', "--chdir");
	const char *name = opt_value(argv, op, 'J', "--job-name");
	const char *array = opt_value(argv, op, 'a', "--array");
	const char *wrap = opt_value(argv, op, 0, "--wrap");

	absolute(dir ? dir : cwd, cwd, out->work_dir, sizeof(out->work_dir));
	copy_string(out->job_name, sizeof(out->job_name), name ? name : "");
	if (!strcmp(program, "sbatch")) {
		copy_string(out->array, sizeof(out->array), array ? array : "");
		out->waits = has_flag(argv, op, "--wait", "-W");
		if (wrap)
			copy_string(out->command, sizeof(out->command), wrap);
		else if (op < argc)
			absolute(argv[op], cwd, out->script, sizeof(out->script));
		snakemake_jobscript(out);
	} else {
		out->waits = true; /* srun runs its step; salloc holds its allocation */
		join_words(argv, op, argc, out->command, sizeof(out->command));
	}
}

/* qsub [options] script | qsub [options] -- command: PBS Pro (-J, -W block=true), Torque (-t, -d).
 */
static void pbs_submit(char *const *argv, size_t argc, const char *cwd, struct batch_submit *out)
{
	size_t op = first_operand(&qsub_opts, argv, argc);
	const char *dir = opt_value(argv, op, 'd', NULL);
	const char *name = opt_value(argv, op, 'N', NULL);
	const char *array = opt_value(argv, op, 'J', NULL);
	const char *w = opt_value(argv, op, 'W', NULL);
	bool dashdash = op > 1 && !strcmp(argv[op - 1], "--");

	if (!dir)
		dir = opt_value(argv, op, 'w', NULL);
	if (!array)
		array = opt_value(argv, op, 't', NULL);
	/* PBS starts a job in the user's home unless told (-d, -w); we cannot know it. */
	absolute(dir, cwd, out->work_dir, sizeof(out->work_dir));
	copy_string(out->job_name, sizeof(out->job_name), name ? name : "");
	copy_string(out->array, sizeof(out->array), array ? array : "");
	out->waits = w && strstr(w, "block=true");
	if (dashdash)
		join_words(argv, op, argc, out->command, sizeof(out->command));
	else if (op < argc)
		absolute(argv[op], cwd, out->script, sizeof(out->script));
}

/* bsub options with a value; the rest (-K, -I, -B, -N, -H, -r, -x ...) are flags. */
static const char *const bsub_with_value[] = {
    "-J",   "-cwd", "-o",  "-oo", "-e",	     "-eo",   "-q",   "-n",	   "-R",   "-W",  "-M",
    "-P",   "-G",   "-u",  "-i",  "-m",	     "-w",    "-E",   "-Ep",	   "-L",   "-k",  "-app",
    "-sla", "-g",   "-b",  "-t",  "-c",	     "-D",    "-F",   "-S",	   "-v",   "-a",  "-Lp",
    "-C",   "-f",   "-Jd", "-U",  "-We",     "-gpu",  "-ptl", "-jsdl",	   "-ext", "-XF", "-rnc",
    "-s",   "-sp",  "-wa", "-wt", "-outdir", "-data", "-env", "-hostfile", NULL};

/* bsub [options] command [args] (or the script on stdin): -J "name[1-10]" is an array. */
static void lsf_submit(char *const *argv, size_t argc, const char *cwd, struct batch_submit *out)
{
	size_t i = 1;
	const char *name = NULL, *dir = NULL;

	while (i < argc && argv[i][0] == '-') {
		if (in_list(bsub_with_value, argv[i]) && i + 1 < argc) {
			if (!strcmp(argv[i], "-J"))
				name = argv[i + 1];
			else if (!strcmp(argv[i], "-cwd"))
				dir = argv[i + 1];
			i += 2;
			continue;
		}
		if (!strcmp(argv[i], "-K"))
			out->waits = true;
		i++;
	}
	absolute(dir ? dir : cwd, cwd, out->work_dir, sizeof(out->work_dir));
	const char *bracket = name ? strchr(name, '[') : NULL;
	if (bracket) {
		snprintf(out->job_name, sizeof(out->job_name), "%.*s", (int)(bracket - name), name);
		snprintf(out->array, sizeof(out->array), "%.*s", (int)strcspn(bracket + 1, "]"),
			 bracket + 1);
	} else {
		copy_string(out->job_name, sizeof(out->job_name), name ? name : "");
	}
	join_words(argv, i, argc, out->command, sizeof(out->command));
}

/* aws batch submit-job --job-name N --job-queue Q ...: work that leaves the host. */
static bool aws_submit(char *const *argv, size_t argc, struct batch_submit *out)
{
	if (argc < 3 || strcmp(argv[1], "batch") != 0 || strcmp(argv[2], "submit-job") != 0)
		return false;
	const char *name = opt_value(argv, argc, 0, "--job-name");
	const char *size = opt_value(argv, argc, 0, "--array-properties");
	copy_string(out->job_name, sizeof(out->job_name), name ? name : "");
	if (size && strstr(size, "size="))
		copy_string(out->array, sizeof(out->array), strstr(size, "size=") + 5);
	copy_string(out->command, sizeof(out->command), "aws batch submit-job");
	return true;
}

bool batch_is_submitter(const char *program)
{
	static const char *const names[] = {"sbatch", "srun", "salloc", "qsub",
					    "bsub",   "aws",  NULL};

	return program && in_list(names, program);
}

bool batch_submit_parse(const char *program, char *const *argv, size_t argc, const char *cwd,
			struct batch_submit *out)
{
	if (!program || argc < 1 || !batch_is_submitter(program))
		return false;
	memset(out, 0, sizeof(*out));
	/* A script's argv starts with its interpreter (`python3 /usr/bin/aws batch ...`). */
	for (size_t i = 0; i < 3 && i < argc; i++) {
		const char *base = strrchr(argv[i], '/');
		if (!strcmp(base ? base + 1 : argv[i], program)) {
			argv += i;
			argc -= i;
			break;
		}
	}
	if (!strcmp(program, "sbatch") || !strcmp(program, "srun") || !strcmp(program, "salloc")) {
		copy_string(out->scheduler, sizeof(out->scheduler), "slurm");
		slurm_submit(program, argv, argc, cwd, out);
	} else if (!strcmp(program, "qsub")) {
		copy_string(out->scheduler, sizeof(out->scheduler), "pbs");
		pbs_submit(argv, argc, cwd, out);
	} else if (!strcmp(program, "bsub")) {
		copy_string(out->scheduler, sizeof(out->scheduler), "lsf");
		lsf_submit(argv, argc, cwd, out);
	} else if (!strcmp(program, "aws") && aws_submit(argv, argc, out)) {
		copy_string(out->scheduler, sizeof(out->scheduler), "aws-batch");
	} else {
		return false;
	}
	copy_string(out->submitter, sizeof(out->submitter), program);
	out->array_tasks = out->array[0] ? batch_array_tasks(out->array) : 1;
	if (!strcmp(out->scheduler, "aws-batch") && out->array[0])
		out->array_tasks = atoi(out->array);
	return true;
}

/* One "a", "a-b" or "a-b:step" element of an array spec. */
static int range_tasks(const char *s, size_t n)
{
	char buf[32];
	char *end;

	if (n == 0 || n >= sizeof(buf))
		return 0;
	memcpy(buf, s, n);
	buf[n] = '\0';
	long a = strtol(buf, &end, 10), b = a, step = 1;
	if (end == buf)
		return 0;
	if (*end == '-')
		b = strtol(end + 1, &end, 10);
	if (*end == ':')
		step = strtol(end + 1, &end, 10);
	if (*end != '\0' || b < a || step < 1 || (b - a) / step > 1000000)
		return 0;
	return (int)((b - a) / step + 1);
}

int batch_array_tasks(const char *spec)
{
	size_t len = strcspn(spec, "%"); /* %N: at most N at once, not how many */
	int total = 0;

	for (size_t i = 0; i < len;) {
		size_t n = strcspn(spec + i, ",%");
		if (n > len - i)
			n = len - i;
		int t = range_tasks(spec + i, n);
		if (t == 0)
			return 0;
		total += t;
		i += n + 1;
	}
	return total;
}

/* ".../.snakemake/tmp.X/<id>.jobfinished": the jobscript's end marker. */
static bool end_marker(const char *path, struct batch_job_hint *out)
{
	const char *base = strrchr(path, '/');
	const char *dot = base ? strrchr(base, '.') : NULL;

	if (!base || !dot || !strstr(path, "/.snakemake/tmp.") ||
	    (strcmp(dot, ".jobfinished") != 0 && strcmp(dot, ".jobfailed") != 0))
		return false;
	snprintf(out->engine_job_id, sizeof(out->engine_job_id), "%.*s", (int)(dot - base - 1),
		 base + 1);
	snprintf(out->engine_dir, sizeof(out->engine_dir), "%.*s", (int)(base - path), path);
	return true;
}

/* The inner snakemake of a cluster job: --snakefile, --target-jobs, --wait-for-files DIR. */
static bool inner_snakemake(char *const *argv, size_t argc, struct batch_job_hint *out)
{
	const char *file = opt_value(argv, argc, 's', "--snakefile");
	const char *target = opt_value(argv, argc, 0, "--target-jobs");
	const char *wait = opt_value(argv, argc, 0, "--wait-for-files");

	if (!target)
		return false;
	copy_string(out->snakefile, sizeof(out->snakefile), file ? file : "");
	snprintf(out->engine_rule, sizeof(out->engine_rule), "%.*s", (int)strcspn(target, ": ,'\""),
		 target);
	if (wait && strstr(wait, "/.snakemake/tmp."))
		copy_string(out->engine_dir, sizeof(out->engine_dir), wait);
	return true;
}

bool batch_job_hint_parse(const char *program, char *const *argv, size_t argc,
			  struct batch_job_hint *out)
{
	if (!program || (strcmp(program, "snakemake") != 0 && strcmp(program, "touch") != 0))
		return false;
	memset(out, 0, sizeof(*out));
	if (!strcmp(program, "snakemake"))
		return inner_snakemake(argv, argc, out);
	if (!strcmp(program, "touch") && argc >= 2)
		return end_marker(argv[argc - 1], out);
	return false;
}

/* The path component after `marker/` (up to the next '/'), or NULL. */
static const char *component_after(const char *path, const char *marker, size_t *len)
{
	const char *at = strstr(path, marker);

	if (!at || (at != path && at[-1] != '/'))
		return NULL;
	at += strlen(marker);
	if (*at != '/' || !at[1])
		return NULL;
	at++;
	*len = strcspn(at, "/");
	return *len ? at : NULL;
}

static bool lsf_job(const char *comp, size_t len, char *job, size_t jsize)
{
	char id[32] = "", idx[32] = "";

	if (len < 5 || strncmp(comp, "job.", 4) != 0)
		return false;
	const char *dot = memchr(comp + 4, '.', len - 4);
	size_t n = dot ? (size_t)(dot - comp - 4) : len - 4;
	if (!n || n >= sizeof(id))
		return false;
	memcpy(id, comp + 4, n);
	if (dot) {
		size_t m = strcspn(dot + 1, "./");
		if (m < sizeof(idx))
			snprintf(idx, sizeof(idx), "%.*s", (int)m, dot + 1);
	}
	if (idx[0] && strcmp(idx, "0") != 0)
		snprintf(job, jsize, "%s[%s]", id, idx);
	else
		copy_string(job, jsize, id);
	return true;
}

bool batch_cgroup_job(const char *path, char *scheduler, size_t ssize, char *job, size_t jsize)
{
	static const char *const pbs[] = {"pbs_jobs.service/jobid", "pbspro", "torque", NULL};
	const char *comp;
	size_t len;

	if (!path)
		return false;
	for (const char *const *m = pbs; *m; m++) {
		if ((comp = component_after(path, *m, &len))) {
			copy_string(scheduler, ssize, "pbs");
			snprintf(job, jsize, "%.*s", (int)len, comp);
			return true;
		}
	}
	/* lsf/<cluster>/job.<id>.<index>.<time> */
	if ((comp = component_after(path, "lsf", &len))) {
		const char *inner = comp + len;
		if (*inner == '/' && (comp = inner + 1) && (len = strcspn(comp, "/")) &&
		    lsf_job(comp, len, job, jsize)) {
			copy_string(scheduler, ssize, "lsf");
			return true;
		}
	}
	return false;
}
