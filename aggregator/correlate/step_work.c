/*
 * A plain script's step is named by what did its work, and a helper of a few
 * milliseconds (`n=$(date +%s)`, `$(seq 3)`, `$(basename $f)`, the builtin
 * `printf` side of a pipeline) is no step at all (docs/correlation.md, Steps
 * of plain scripts).
 *
 * Naming: each finished image of a step's process adds its CPU and wall time
 * to its tool's tally (shells, wrappers, launchers, helpers and deny-listed
 * programs left out). The tool with most of the CPU (with under 20 ms of CPU
 * in all: most of the wall time) names the step, renamed as another overtakes
 * it until the step ends; if none has more than half (nor twice the next
 * tool's), the step is named by
 * its root's command line (a subshell, which has none: its two main tools).
 * Until 20 ms of work have ended, a running step is named by the tool it
 * exec'd last (a long gzip after a loop's `seq`), as correlate.c names it.
 */
#include "aggregator/correlate/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"

/* Below this much CPU in all, the step waited more than it computed: wall time ranks. */
#define WORK_CPU_FLOOR_NS 20000000ull
/*
 * A script's child that succeeded within this is a helper: one process
 * ($(date)), or a subshell that never exec'd with what it started
 * ($(ls | wc -l)). A program the script ran that started others (`sh -c
 * "a; b"`) is a statement of the script: a step, however short. A fork and exec of `seq` takes
 * 10-20 ms on a loaded 2-core machine; 50 ms leaves more than twice that, and a tool's step that
 * short did too little to be told apart in a timeline. Its CPU is under the
 * same bound (threads that used more in that time did work), its memory under
 * 16 MiB (`date`, `seq`, `basename` take 1-2 MiB, `python3 -c` 9; a tool that
 * touched more in a few ms, such as a sizing or limit check, did work).
 */
#define HELPER_MAX_NS 50000000ll
#define HELPER_MAX_RSS_KB 16384u

static bool script_step(const struct step *s)
{
	return !strcmp(s->kind, "script-step");
}

/*
 * p's tool's entry. With every entry taken, the one with the least CPU gives
 * its place to a tool that used more (cpu_ns) in one image: a program after
 * dozens of small helper programs (pyenv's shim scripts) is still tallied.
 */
static struct step_tool_time *tally_of(struct step *s, const struct proc *p, uint64_t cpu_ns)
{
	for (unsigned i = 0; i < s->work.n_tools; i++)
		if (s->work.tools[i].tool_id == p->row.tool_id)
			return &s->work.tools[i];
	struct step_tool_time *t;
	if (s->work.n_tools == STEP_TOOLS_MAX) {
		t = &s->work.tools[0];
		for (unsigned i = 1; i < s->work.n_tools; i++)
			if (s->work.tools[i].cpu_ns < t->cpu_ns)
				t = &s->work.tools[i];
		if (t->cpu_ns >= cpu_ns)
			return NULL; /* counted in the totals alone */
		free(t->argv);
	} else {
		t = &s->work.tools[s->work.n_tools++];
	}
	*t = (struct step_tool_time){.tool_id = p->row.tool_id, .name = p->in.tool_name};
	t->argv = p->row.argv_json ? strdup(p->row.argv_json) : NULL;
	return t;
}

/* Whether p's current image is a tool whose time counts towards naming its step. */
static bool counts_as_work(const struct proc *p)
{
	return p->in.tool_name && p->row.tool_id && !p->in.plumbing && !p->in.launcher &&
	       !p->in.denied && !p->row.helper;
}

void step_work_add(struct step *s, const struct proc *p, const struct process_row *image)
{
	if (!script_step(s) || s->dissolved || !counts_as_work(p))
		return;
	uint64_t cpu = image->m.cpu_user_ns + image->m.cpu_sys_ns;
	uint64_t wall = image->end_epoch_ns > image->start_epoch_ns
			    ? (uint64_t)(image->end_epoch_ns - image->start_epoch_ns)
			    : 0;
	struct step_tool_time *t = tally_of(s, p, cpu);

	if (t) {
		t->cpu_ns += cpu;
		t->wall_ns += wall;
	}
	s->work.tools_cpu_ns += cpu;
	s->work.tools_wall_ns += wall;
}

void step_work_tail(struct step *s, const struct proc *p, int64_t cpu_ns)
{
	struct step_tool_time *t;

	if (!script_step(s) || s->dissolved || cpu_ns <= 0 || !counts_as_work(p))
		return;
	if ((t = tally_of(s, p, (uint64_t)cpu_ns)))
		t->cpu_ns += (uint64_t)cpu_ns;
	s->work.tools_cpu_ns += (uint64_t)cpu_ns;
}

void step_note_command(struct step *s, char *const *argv, size_t argc)
{
	size_t n = 0, max = sizeof(s->command) - 4;

	for (size_t i = 0; i < argc && n < max; i++) {
		int w =
		    snprintf(s->command + n, sizeof(s->command) - n, "%s%s", i ? " " : "", argv[i]);
		n = w < 0 ? n : n + (size_t)w;
	}
	if (n < max)
		return;
	/* Cut on a character's first byte, and say it was cut. */
	n = max;
	while (n > 0 && ((unsigned char)s->command[n] & 0xC0) == 0x80)
		n--;
	memcpy(s->command + n, "...", 4);
}

static uint64_t measure(const struct step_tool_time *t, bool by_cpu)
{
	return by_cpu ? t->cpu_ns : t->wall_ns;
}

/* The first and second tool by CPU (by wall below the floor), ties to the longer wall. */
static void rank(struct step *s, bool by_cpu, struct step_tool_time **first,
		 struct step_tool_time **second)
{
	*first = *second = NULL;
	for (unsigned i = 0; i < s->work.n_tools; i++) {
		struct step_tool_time *t = &s->work.tools[i];
		bool beats_first = !*first || measure(t, by_cpu) > measure(*first, by_cpu) ||
				   (measure(t, by_cpu) == measure(*first, by_cpu) &&
				    measure(t, !by_cpu) > measure(*first, !by_cpu));
		if (beats_first) {
			*second = *first;
			*first = t;
		} else if (!*second || measure(t, by_cpu) > measure(*second, by_cpu)) {
			*second = t;
		}
	}
}

bool step_named_by_exec(const struct step *s)
{
	return script_step(s) && s->status == GROUP_RUNNING &&
	       s->work.tools_cpu_ns < WORK_CPU_FLOOR_NS;
}

void step_name_by_work(struct step *s, bool final)
{
	char name[sizeof(s->name)];
	struct step_tool_time *first, *second;

	if (!script_step(s) || s->dissolved || !s->work.n_tools || s->status != GROUP_RUNNING ||
	    (!final && step_named_by_exec(s) && s->name[0]))
		return;
	bool by_cpu = s->work.tools_cpu_ns >= WORK_CPU_FLOOR_NS;
	uint64_t total = by_cpu ? s->work.tools_cpu_ns : s->work.tools_wall_ns;
	rank(s, by_cpu, &first, &second);
	/* Dominant: over half of the work, or twice the next tool's (a program among
	 * many small ones, such as a version manager's dozens of shim scripts). */
	bool dominant = !second || measure(first, by_cpu) * 2 > total ||
			measure(first, by_cpu) >= 2 * measure(second, by_cpu);
	if (dominant)
		copy_string(name, sizeof(name), first->name);
	else if (s->command[0])
		copy_string(name, sizeof(name), s->command);
	else
		snprintf(name, sizeof(name), "%s + %s", first->name, second->name);
	s->main_tool_id = first->tool_id;
	s->naming.named = true;
	s->naming.named_by_tool = true;
	if (strcmp(name, s->name) != 0) {
		copy_string(s->name, sizeof(s->name), name);
		step_mark_dirty(s);
	}
	/* Its signature is the argv of what names it: the dominant tool's. */
	if (dominant && first->argv && (!s->signature || strcmp(s->signature, first->argv))) {
		free(s->signature);
		s->signature = strdup(first->argv);
	}
}

bool step_is_helper(const struct step *s, const struct proc *root)
{
	const struct process_row *row = &root->row;

	return script_step(s) && !s->dissolved && !s->linked && s->r.failed == 0 &&
	       (!root->life.had_children || !root->life.execed) && row->has_exit_code &&
	       row->exit_code == 0 && !row->has_signal && s->r.live == 0 &&
	       s->r.end_epoch_ns - s->r.start_epoch_ns < HELPER_MAX_NS &&
	       s->r.cpu_ns < (uint64_t)HELPER_MAX_NS && s->r.max_process_rss_kb < HELPER_MAX_RSS_KB;
}

static void unlink_step(struct step **list, struct step *s, bool dirty_list)
{
	for (struct step **link = list; *link;
	     link = dirty_list ? &(*link)->dirty_next : &(*link)->next) {
		if (*link != s)
			continue;
		*link = dirty_list ? s->dirty_next : s->next;
		return;
	}
}

void step_dissolve(struct step *s, struct proc *root)
{
	struct run *r = s->run;
	char seq[16];

	unlink_step(&r->steps, s, false);
	if (s->dirty)
		unlink_step(&r->dirty_steps, s, true);
	s->dirty = false;
	s->dirty_next = NULL;
	if (!r->steps_unindexed)
		strmap_remove(&r->steps_by_key, s->key);
	r->n_steps--;
	/* The latest step's number is the next one's: steps stay numbered 1, 2, 3. */
	snprintf(seq, sizeof(seq), "%u", r->step_seq);
	if (!strcmp(seq, s->key))
		r->step_seq--;
	if (s->r.start_epoch_ns > r->last_helper_start_epoch_ns)
		r->last_helper_start_epoch_ns = s->r.start_epoch_ns;
	s->dissolved = true;
	s->forget_pending = true;
	s->next = r->dissolved;
	r->dissolved = s;
	r->dirty = true;
	set_step(root, NULL);
}

int steps_forget_write(struct correlator *c, const struct run *r)
{
	for (const struct step *s = r->dissolved; s; s = s->next)
		if (s->forget_pending && store_forget_step(c->store, s->id, s->outbox_mark) != 0)
			return -1;
	return 0;
}

void step_free(struct step *s)
{
	for (unsigned i = 0; i < s->work.n_tools; i++)
		free(s->work.tools[i].argv);
	free(s->signature);
	free(s->identity);
	free(s);
}

void steps_dissolved_committed(struct run *r)
{
	for (struct step **link = &r->dissolved; *link;) {
		struct step *s = *link;
		s->forget_pending = false;
		if (s->refs == 0) {
			*link = s->next;
			step_free(s);
			continue;
		}
		link = &s->next;
	}
}
