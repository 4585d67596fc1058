/* tracer: the command users type. One file per verb; this one dispatches. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/db/fleet.h"
#include "cli/render/clierror.h"
#include "cli/render/format.h"
#include "cli/render/termsafe.h"
#include "cli/verbs/commands.h"

#include "common/paths.h"
#include "common/version.h"

struct verb {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
};

static const struct verb verbs[] = {
    {"run", cmd_run, "run a command and report every process it started"},
    {"show", cmd_show, "show a recorded run as a process tree"},
    {"runs", cmd_runs, "recorded runs, newest first"},
    {"timeline", cmd_timeline, "a run's steps over time, as a text Gantt chart"},
    {"top", cmd_top, "what is running now, per run, step and tool, with progress"},
    {"signals", cmd_signals, "failure signals of a run: OOM kills, failures, stalls, slow steps"},
    {"explain", cmd_explain, "why a run or step was slow or failed, ranked by evidence"},
    {"cost", cmd_cost, "what the host cost and who used it, by step, run, tool, user..."},
    {"energy", cmd_energy, "energy (Wh) and carbon (g CO2e) by step, run, pipeline, tool, user"},
    {"recommend", cmd_recommend, "right-sizing: what each step used, was given, should get"},
    {"idle", cmd_idle, "periods the host ran no tracked work, and what they cost"},
    {"export", cmd_export, "a run's provenance as an RO-Crate (--ro-crate DIR)"},
    {"report", cmd_report, "a self-contained HTML report of a run (--html FILE)"},
    {"status", cmd_status, "probes, losses and daemon health"},
    {"retention", cmd_retention,
     "with --fleet: drop the fleet store's days older than N (no TTL on 18.16)"},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: tracer VERB [options]\n\n");
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		fprintf(out, "  %-10s %s\n", verbs[i].name, verbs[i].help);
	fprintf(
	    out,
	    "\n'tracer VERB --help' (or 'tracer help VERB') for a verb's options; 'tracer "
	    "--version' (or "
	    "'tracer version', '-V') for the version.\n'tracer --db PATH VERB ...' is "
	    "'tracer VERB --db PATH ...'; without --db, $TRACER_DB, else " TRACER_DEFAULT_DB
	    ".\n'tracer --fleet [clickhouse://HOST:PORT/DB | FILE] VERB ...' reads the fleet "
	    "store (runs, show, signals, explain, report, timeline, top, cost, recommend, energy, "
	    "idle, retention; "
	    "docs/shipping.md).\n"
	    "Times are local (the zone named); --utc, with any "
	    "verb, prints them in UTC.\n");
}

/* Tracer's own arguments: for run only those before its "--" (never CMD's). */
static int own_argument_end(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--"))
			return i;
	return argc > 1 && !strcmp(argv[1], "run") ? 1 : argc;
}

/* Did the command line ask for JSON? Then errors come as JSON too (clierror.h). */
/*
 * Takes --utc out of tracer's own arguments (for run: only before its "--",
 * never from CMD's) and applies it. Returns the new argc.
 */
static int take_utc_option(int argc, char **argv)
{
	/* without "--" run's command words are not told from its options: none taken */
	int end = own_argument_end(argc, argv), kept = 1;

	for (int i = 1; i < argc; i++) {
		if (i < end && !strcmp(argv[i], "--utc")) {
			format_use_utc(true);
			continue;
		}
		argv[kept++] = argv[i];
	}
	argv[kept] = NULL;
	return kept;
}

static bool wants_json(int argc, char **argv)
{
	int end = own_argument_end(argc, argv);

	for (int i = 2; i < end; i++)
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "--format=json") ||
		    (!strcmp(argv[i], "--format") && i + 1 < end && !strcmp(argv[i + 1], "json")))
			return true;
	return false;
}

/*
 * The verbs that print text for a person: on a terminal their lines wrap at a
 * word to its width (tables are already fitted; sentences are not). Not run
 * (CMD's output is its own), top (it wraps its own view), report, and never
 * JSON, an export format or a width the user chose (timeline --width).
 */
static bool wraps_output(int argc, char **argv)
{
	static const char *const prose[] = {"show", "runs",	 "timeline", "signals", "explain",
					    "cost", "recommend", "idle",     "status",	"energy"};
	bool known = false;

	for (size_t i = 0; i < sizeof(prose) / sizeof(prose[0]); i++)
		known = known || !strcmp(argv[1], prose[i]);
	for (int i = 2; known && i < argc; i++)
		if (!strncmp(argv[i], "--format", 8) || !strcmp(argv[i], "--help") ||
		    !strcmp(argv[i], "-h") || !strncmp(argv[i], "--width", 7))
			return false;
	return known && !wants_json(argc, argv) && format_terminal_columns(STDOUT_FILENO) > 0;
}

struct verb_call {
	const struct verb *verb;
	int argc;
	char **argv;
};

static int call_verb(void *ctx)
{
	struct verb_call *c = ctx;

	return c->verb->run(c->argc, c->argv);
}

/* Runs the verb with stdout gathered, then prints it wrapped to the terminal. */
static int run_wrapped(const struct verb *v, int argc, char **argv)
{
	struct verb_call c = {v, argc, argv};

	return print_wrapped_call(call_verb, &c, format_terminal_columns(STDOUT_FILENO));
}

static bool is_verb(const char *name)
{
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(name, verbs[i].name))
			return true;
	return false;
}

/* tracer --help, -h, help, and help's own help (help --help, help -h, help help). */
static bool asks_usage(int argc, char **argv)
{
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return true;
	return !strcmp(argv[1], "help") && (argc == 2 || !strcmp(argv[2], "--help") ||
					    !strcmp(argv[2], "-h") || !strcmp(argv[2], "help"));
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (asks_usage(argc, argv)) {
		usage(stdout);
		return 0;
	}
	/* tracer help VERB: what git and most CLIs take for VERB --help. */
	if (strcmp(argv[1], "help") == 0) {
		argv[1] = argv[2];
		argv[2] = "--help";
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") ||
	    !strcmp(argv[1], "version")) {
		printf("tracer %s\n", TRACER_VERSION);
		return 0;
	}
	/* tracer --fleet [URL|CONFIG] VERB ARGS...: the verbs read the fleet store. */
	if (argc >= 3 && !strcmp(argv[1], "--fleet")) {
		bool given = argc >= 4 && !is_verb(argv[2]);
		if (fleet_select(given ? argv[2] : NULL) != 0)
			return 2;
		int drop = given ? 2 : 1;
		for (int i = 1; i + drop <= argc; i++) /* argv[argc] (NULL) moves too */
			argv[i] = argv[i + drop];
		argc -= drop;
		if (!fleet_reads(argv[1])) {
			fprintf(stderr,
				"tracer %s: not available over the fleet (runs, show, signals, "
				"explain, report, timeline, top, cost, recommend, energy and idle "
				"are)\n",
				argv[1]);
			return 1;
		}
	}
	/* tracer --db PATH VERB ARGS... : the verb first, --db PATH among its options. */
	if ((!strcmp(argv[1], "--db") && argc >= 4) ||
	    (!strncmp(argv[1], "--db=", 5) && argc >= 3)) {
		int n = argv[1][4] == '=' ? 1 : 2;
		char *moved[2] = {argv[1], argv[2]};
		char *verb = argv[1 + n];
		for (int i = n; i > 0; i--)
			argv[1 + i] = moved[i - 1];
		argv[1] = verb;
	}
	argc = take_utc_option(argc, argv);
	if (argc < 2) { /* `tracer --utc` alone: no verb */
		usage(stderr);
		return 2;
	}
	cli_error_want_json(wants_json(argc, argv));
	/* Text for people: nothing from the database drives their terminal. JSON
	 * (escaped by jansson) and the HTML report stay byte for byte. */
	if (!wants_json(argc, argv) && strcmp(argv[1], "report") != 0) {
		FILE *safe = termsafe_open(STDOUT_FILENO);
		if (safe)
			stdout = safe;
	}
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(argv[1], verbs[i].name) == 0)
			return cli_error_finish(verbs[i].name,
						wraps_output(argc, argv)
						    ? run_wrapped(&verbs[i], argc - 1, argv + 1)
						    : verbs[i].run(argc - 1, argv + 1));
	fprintf(stderr, "tracer: unknown verb '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
