/*
 * Containers join the run and step that started them. A container's
 * processes are children of the runtime's shim (containerd-shim, conmon),
 * not of the `docker run` that asked for them, so the process tree cannot
 * say whose they are. What the OS shows can: the container's first program
 * (the first exec in a cgroup whose path names a container id, runc's own
 * aside) runs the command the CLI's argv gave after the image (or after an
 * entrypoint, or as --entrypoint), as the uid its --user gave, while that CLI
 * lives and after it started. Each live `docker|podman|nerdctl run` CLI on
 * the host is a candidate, in a run or not; one that matched is used up (a
 * `run` starts one container). Later processes of the container join by its
 * id. When CLIs of different runs match, the container is linked to none of
 * them and each run says so (container_links, method 'ambiguous').
 */
#include "aggregator/correlate/internal.h"

#include <stdlib.h>
#include <string.h>

#include "aggregator/correlate/container_cli.h"
#include "aggregator/insight/limits.h"
#include "common/jsonutil.h"
#include "common/log.h"
#include "common/strutil.h"

#define MAX_CANDIDATES 8

/* A live CLI that can start a container. */
struct container_cli {
	struct container_cli *prev, *next;
	struct container_state *st; /* whose list it is on */
	struct proc *proc;	    /* its entry (proc->in.container_cli points back) */
	char engine[16];
	char **cmd; /* the command it asked for (owned copies) */
	size_t ncmd;
	char *entrypoint, *image;
	bool has_user;
	uint32_t user;
	bool used; /* matched a container already */
};

struct candidate {
	struct container_cli *cli;
	const char *method;
};

/* A container seen on this host, linked or not. */
struct container {
	struct container *next;
	struct container_link_row row; /* as written; row.id 0: nothing to write */
	char container_id[80];
	uint32_t first_pid; /* its first program (its end ends the container) */
	uint64_t first_start_boot_ns;
	struct run *run; /* counted reference; NULL: linked to no run */
	struct step *step;
	bool ended, dirty;
	size_t n_candidates;
	struct container_link_candidate candidates[MAX_CANDIDATES];
};

struct container_state {
	struct container_cli *clis;
	struct container *containers;
	int64_t next_link_id;
};

static struct container_state *state_of(struct correlator *c)
{
	if (!c->containers && (c->containers = calloc(1, sizeof(*c->containers))))
		c->containers->next_link_id = store_max_id(c->store, "container_links") + 1;
	return c->containers;
}

static void free_cli(struct container_cli *k)
{
	for (size_t i = 0; i < k->ncmd; i++)
		free(k->cmd[i]);
	free(k->cmd);
	free(k->entrypoint);
	free(k->image);
	free(k);
}

/* The CLI is gone (exited, or its entry freed): it can start nothing more. */
static void forget_cli(struct proc *p)
{
	struct container_cli *k = p->in.container_cli;

	if (!k)
		return;
	struct container_state *st = k->st;
	if (k->prev)
		k->prev->next = k->next;
	else
		st->clis = k->next;
	if (k->next)
		k->next->prev = k->prev;
	p->in.container_cli = NULL;
	free_cli(k);
}

static bool keep_args(struct container_cli *k, const struct container_cli_args *a,
		      char *const *argv)
{
	k->cmd = calloc(a->ncmd ? a->ncmd : 1, sizeof(*k->cmd));
	if (!k->cmd)
		return false;
	for (size_t i = 0; i < a->ncmd; i++, k->ncmd++)
		if (!(k->cmd[i] = strdup(argv[a->cmd + i])))
			return false;
	k->image = a->target ? strdup(argv[a->target]) : NULL;
	k->entrypoint = a->entrypoint ? strdup(a->entrypoint) : NULL;
	return (!a->target || k->image) && (!a->entrypoint || k->entrypoint);
}

bool containers_cli_exec(struct correlator *c, struct proc *p, char *const *argv, size_t argc)
{
	struct container_cli_args a;
	struct container_state *st;

	forget_cli(p); /* it runs another program now */
	if (!container_cli_parse(p->row.exe, argv, argc, &a))
		return false;
	/* The engine's plumbing (podman's conmon, runc, its own re-execs) is forked by
	 * it: helpers, never a step's name or its failed tool; the container's
	 * programs are not (containers_exec). */
	if (a.verb == CLI_RUN || a.verb == CLI_START || a.verb == CLI_EXEC)
		p->row.helper = true;
	if (a.verb != CLI_RUN || !(st = state_of(c)))
		return a.verb == CLI_RUN || a.verb == CLI_START || a.verb == CLI_EXEC;
	struct container_cli *k = calloc(1, sizeof(*k));
	if (!k || !keep_args(k, &a, argv)) {
		if (k)
			free_cli(k);
		return true;
	}
	k->proc = p;
	k->st = st;
	copy_string(k->engine, sizeof(k->engine), a.engine);
	k->has_user = a.has_user;
	k->user = a.user;
	k->next = st->clis;
	if (st->clis)
		st->clis->prev = k;
	st->clis = k;
	p->in.container_cli = k;
	return true;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The same program: equal, or equal base names (a command found on the image's PATH). */
static bool same_program(const char *asked, const char *ran)
{
	return !strcmp(asked, ran) || !strcmp(base_name(asked), base_name(ran));
}

/* Does the container's first argv run what the CLI asked for? The method, or NULL. */
static const char *argv_match(const struct container_cli *k, char *const *argv, size_t argc)
{
	if (k->entrypoint && k->entrypoint[0]) {
		if (argc != k->ncmd + 1 || !same_program(k->entrypoint, argv[0]))
			return NULL;
		for (size_t i = 0; i < k->ncmd; i++)
			if (strcmp(k->cmd[i], argv[i + 1]) != 0)
				return NULL;
		return "argv";
	}
	if (!k->ncmd || argc < k->ncmd)
		return NULL; /* the image's own command: nothing in argv to match */
	size_t skip = argc - k->ncmd;
	for (size_t i = 0; i < k->ncmd; i++)
		if (strcmp(k->cmd[i], argv[skip + i]) != 0 &&
		    (i || skip || !same_program(k->cmd[0], argv[0])))
			return NULL;
	return skip ? "entrypoint" : "argv";
}

/*
 * The live, unused CLIs whose command the container's first program runs. A
 * CLI whose command is its whole argv beats one whose command only ends it
 * (`docker run img 1000` of an image whose entrypoint is the program).
 */
static size_t find_candidates(struct container_state *st, const struct proc *p, char *const *argv,
			      size_t argc, struct candidate *out)
{
	size_t n = 0, whole = 0;

	for (struct container_cli *k = st->clis; k && n < MAX_CANDIDATES; k = k->next) {
		const char *how;
		if (k->used || k->proc->start_boot_ns > p->start_boot_ns ||
		    (k->has_user && p->row.has_ids && p->row.uid != k->user) ||
		    !(how = argv_match(k, argv, argc)))
			continue;
		out[n].cli = k;
		out[n++].method = how;
		whole += !strcmp(how, "argv");
	}
	if (!whole || whole == n)
		return n;
	size_t kept = 0;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(out[i].method, "argv"))
			out[kept++] = out[i];
	return kept;
}

/*
 * The one candidate to link, or NULL (none, or ambiguous). Several in one
 * run: the process tree picks one if it leads to one of them (podman's
 * conmon is forked by its CLI); else any of them holds the run, and the step
 * only if they share it.
 */
static struct container_cli *choose(const struct candidate *cands, size_t n, const struct proc *p,
				    bool *same_step)
{
	struct container_cli *by_tree = NULL;
	size_t by_tree_n = 0;

	*same_step = true;
	for (size_t i = 0; i < n; i++) {
		const struct proc *cli = cands[i].cli->proc;
		if (p->in.run && cli->in.run == p->in.run && cli->in.step == p->in.step) {
			by_tree_n++;
			by_tree = cands[i].cli;
		}
		if (cli->in.step != cands[0].cli->proc->in.step)
			*same_step = false;
	}
	if (by_tree_n == 1) {
		*same_step = true;
		return by_tree;
	}
	for (size_t i = 1; i < n; i++)
		if (cands[i].cli->proc->in.run != cands[0].cli->proc->in.run)
			return NULL;
	return n ? cands[0].cli : NULL;
}

/* The step's work ran in this container: its id and limits are the step's. */
static void step_in_container(struct correlator *c, struct step *s, const struct proc *p)
{
	if (!s || s->container_id[0])
		return;
	copy_string(s->container_id, sizeof(s->container_id), p->row.container_id);
	int64_t mem = 0;
	double cpus = 0;
	cgroup_limits(c->cgroup_root ? c->cgroup_root : "/sys/fs/cgroup",
		      p->row.cgroup1_id ? cgroup_path_of(c, p->row.cgroup1_id, true) : NULL,
		      p->row.cgroup_id ? cgroup_path_of(c, p->row.cgroup_id, false) : NULL, &mem,
		      &cpus);
	if (mem)
		s->memory_limit_kb = mem;
	if (cpus > 0)
		s->cpu_limit = cpus;
	step_mark_dirty(s);
}

static void fill_link(struct container_state *st, struct container *k, const struct proc *p,
		      const struct container_cli *cli, const char *method, size_t n)
{
	struct container_link_row *row = &k->row;

	row->id = st->next_link_id++;
	copy_string(row->boot_id, sizeof(row->boot_id), p->row.boot_id);
	row->container_id = k->container_id;
	copy_string(row->runtime, sizeof(row->runtime), p->row.container_runtime);
	row->first_process_id = p->row.id;
	row->first_start_epoch_ns = p->row.start_epoch_ns;
	row->method = method;
	row->candidates = (uint32_t)n;
	copy_string(row->engine, sizeof(row->engine), cli->engine);
	row->image = cli->image ? strdup(cli->image) : NULL;
	row->command_json = json_string_array(cli->cmd, cli->ncmd);
	if (!k->run)
		return; /* ambiguous: no launcher, no run */
	row->run_id = k->run->row.id;
	row->step_id = k->step ? k->step->id : 0;
	row->launcher_process_id = cli->proc->row.id;
	row->launcher_pid = cli->proc->pid;
}

/* The container's first program: find the CLI that started it. */
static void link_first(struct correlator *c, struct container_state *st, struct container *k,
		       struct proc *p, char *const *argv, size_t argc)
{
	struct candidate cands[MAX_CANDIDATES];
	size_t n = find_candidates(st, p, argv, argc, cands);
	bool same_step;
	struct container_cli *cli = choose(cands, n, p, &same_step);

	if (cli) {
		cli->used = true;
		k->run = cli->proc->in.run;
		k->step = same_step ? cli->proc->in.step : NULL;
		if (k->run)
			k->run->refs++;
	}
	/* Written when it concerns a run: a self-hosted `tracer run` keeps to its own. */
	bool ours = k->run != NULL;
	for (size_t i = 0; i < n && k->n_candidates < MAX_CANDIDATES; i++) {
		const struct proc *q = cands[i].cli->proc;
		ours = ours || q->in.run;
		k->candidates[k->n_candidates++] =
		    (struct container_link_candidate){.run_id = q->in.run ? q->in.run->row.id : 0,
						      .step_id = q->in.step ? q->in.step->id : 0,
						      .launcher_process_id = q->row.id,
						      .launcher_pid = q->pid};
	}
	if (!ours)
		return;
	const char *method = "ambiguous";
	for (size_t i = 0; cli && i < n; i++)
		if (cands[i].cli == cli)
			method = cands[i].method;
	fill_link(st, k, p, cli ? cli : cands[0].cli, method, n);
	k->dirty = true;
	if (!cli)
		log_info("container %.12s: %zu runs started the same command, linked to none",
			 k->container_id, n);
	if (k->run)
		k->run->dirty = true;
}

static struct container *find_container(struct container_state *st, const char *id)
{
	for (struct container *k = st->containers; k; k = k->next)
		if (!strcmp(k->container_id, id))
			return k;
	return NULL;
}

/* The runtime's own programs run in the container's cgroup before its command does. */
static bool runtime_program(const char *exe)
{
	const char *base = exe ? base_name(exe) : "";

	return !strcmp(base, "runc") || !strcmp(base, "crun") || !strcmp(base, "conmon") ||
	       !strcmp(base, "runsc") || !strncmp(base, "memfd:", 6) || !*base;
}

void containers_exec(struct correlator *c, struct proc *p, char *const *argv, size_t argc,
		     int64_t ts_ns)
{
	struct container_state *st;
	struct container *k;

	if (!p->row.container_id[0] || !(st = state_of(c)))
		return;
	if (!runtime_program(p->row.exe))
		p->row.helper = false; /* a program in the container, not its engine's plumbing */
	if (!(k = find_container(st, p->row.container_id))) {
		if (runtime_program(p->row.exe) || !(k = calloc(1, sizeof(*k))))
			return;
		copy_string(k->container_id, sizeof(k->container_id), p->row.container_id);
		k->first_pid = p->pid;
		k->first_start_boot_ns = p->start_boot_ns;
		k->next = st->containers;
		st->containers = k;
		link_first(c, st, k, p, argv, argc);
		k->row.first_exec_epoch_ns = ts_ns;
	}
	if (!k->run)
		return;
	step_in_container(c, k->step, p);
	if (p->in.run == k->run && p->in.step == k->step)
		return;
	set_run(p, k->run);
	set_step(p, k->step);
}

void containers_exit(struct correlator *c, struct proc *p)
{
	struct container_state *st = c->containers;
	struct container *k;

	forget_cli(p);
	if (!st)
		return;
	if (p->row.container_id[0] && (k = find_container(st, p->row.container_id)) &&
	    same_process(k->first_pid, k->first_start_boot_ns, p))
		k->ended = true;
}

void containers_release(struct proc *p)
{
	forget_cli(p);
}

bool containers_pending(const struct correlator *c)
{
	for (const struct container *k = c->containers ? c->containers->containers : NULL; k;
	     k = k->next)
		if (k->dirty)
			return true;
	return false;
}

int containers_write(struct correlator *c)
{
	struct container_state *st = c->containers;

	for (struct container *k = st ? st->containers : NULL; k; k = k->next) {
		if (!k->dirty)
			continue;
		if (store_put_container_link(c->store, &k->row, k->candidates, k->n_candidates) !=
		    0)
			return -1;
	}
	return 0;
}

static void free_container(struct container *k)
{
	if (k->run)
		k->run->refs--;
	free(k->row.command_json);
	free(k->row.image);
	free(k);
}

void containers_committed(struct correlator *c)
{
	struct container_state *st = c->containers;

	if (!st)
		return;
	for (struct container **link = &st->containers; *link;) {
		struct container *k = *link;
		k->dirty = false;
		if (k->ended) {
			*link = k->next;
			free_container(k);
			continue;
		}
		link = &k->next;
	}
}

void containers_free(struct correlator *c)
{
	struct container_state *st = c->containers;

	if (!st)
		return;
	for (struct container *k = st->containers; k;) {
		struct container *next = k->next;
		k->run = NULL; /* the runs are freed beside */
		free_container(k);
		k = next;
	}
	while (st->clis) {
		struct container_cli *k = st->clis;
		st->clis = k->next;
		k->proc->in.container_cli = NULL;
		free_cli(k);
	}
	free(st);
	c->containers = NULL;
}
