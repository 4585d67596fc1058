#include "aggregator/correlate/tools.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileutil.h"
#include "common/strutil.h"
#include "common/vec.h"

/* Programs whose first argument picks what they do. */
static const char *const subcommand_tools[] = {
    "samtools",	     "bcftools", "bwa",	     "bwa-mem2",  "gatk",   "bedtools",	  "picard",
    "seqkit",	     "salmon",	 "kallisto", "vg",	  "pbmm2",  "medaka",	  "nanopolish",
    "sambamba",	     "tabix",	 "bedops",   "vcftools",  "pysam",  "cellranger", "star-fusion",
    "mmseqs",	     "diamond",	 "hmmpress", "deeptools", "macs2",  "macs3",	  "plink2",
    "bowtie2-build", "git",	 "conda",    "mamba",	  "docker", "podman",	  "singularity",
    "apptainer",     "kubectl",	 "aws",	     "gsutil",	  "gcloud", "nextflow",	  "snakemake",
    "toil",	     "cromwell",
};

/* Interpreters: the tool is the script or module they run. */
static const char *const script_interpreters[] = {"perl",  "ruby", "node", "Rscript",
						  "julia", "php",  "lua",  "tclsh"};
static const char *const shells[] = {"bash", "sh", "dash", "zsh", "ksh", "fish", "tcsh", "csh"};

/* Start another program in their place or as their child (strace and perf,
 * tracing it, may fork a short-lived probe of their own first). */
static const char *const launchers[] = {
    "env",  "nohup", "setsid", "nice",	  "ionice",   "taskset", "timeout", "stdbuf", "numactl",
    "chrt", "time",  "flock",  "runuser", "unbuffer", "prlimit", "strace",  "perf"};

static const char *const drivers[] = {"make", "gmake", "ninja", "xargs", "parallel"};

/* The first-character test spares a call per entry (run for every exec). */
static bool in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[0] == list[i][0] && strcmp(s, list[i]) == 0)
			return true;
	return false;
}

bool tool_is_launcher(const char *program)
{
	return in_list(program, launchers, sizeof(launchers) / sizeof(*launchers));
}

bool tool_is_driver(const char *program)
{
	return in_list(program, drivers, sizeof(drivers) / sizeof(*drivers));
}

bool tool_is_shell(const char *interpreter)
{
	return in_list(interpreter, shells, sizeof(shells) / sizeof(*shells));
}

/* python, python3, python3.11, pypy3 ... */
static bool is_python(const char *base)
{
	if (strncmp(base, "python", 6) == 0)
		base += 6;
	else if (strncmp(base, "pypy", 4) == 0)
		base += 4;
	else
		return false;
	for (; *base; base++)
		if (!isdigit((unsigned char)*base) && *base != '.')
			return false;
	return true;
}

static bool looks_like_subcommand(const char *arg)
{
	if (!arg || !*arg || arg[0] == '-' || strchr(arg, '/') || strchr(arg, '=') ||
	    strlen(arg) > 40)
		return false;
	/* Subcommands are words: "sort", "HaplotypeCaller", "mem"; never file names. */
	for (const char *p = arg; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
			return false;
	return true;
}

/*
 * Snakemake runs a `script:` rule's file from a copy named by Python's
 * tempfile, .snakemake/scripts/tmpXXXXXXXX.NAME: the tool is NAME, the same
 * in every run.
 */
static const char *without_temp_prefix(const char *base)
{
	if (strncmp(base, "tmp", 3) != 0)
		return base;
	size_t n = strspn(base + 3, "abcdefghijklmnopqrstuvwxyz0123456789_");
	return n == 8 && base[11] == '.' && base[12] ? base + 12 : base;
}

static void set_program(struct tool_identity *t, const char *program)
{
	program = without_temp_prefix(program);
	copy_string(t->program, sizeof(t->program), program);
	copy_string(t->name, sizeof(t->name), program);
}

static void add_subcommand(struct tool_identity *t, char *const *argv, size_t argc, size_t from)
{
	for (size_t i = from; i < argc; i++) {
		if (argv[i][0] == '-')
			return; /* options before a subcommand: none to report */
		if (looks_like_subcommand(argv[i])) {
			/* "samtools sort": the program, a space, the verb (copies, not printf). */
			size_t n = copy_string(t->name, sizeof(t->name), t->program);
			if (n + 1 < sizeof(t->name)) {
				t->name[n] = ' ';
				copy_string(t->name + n + 1, sizeof(t->name) - n - 1, argv[i]);
			}
		}
		return;
	}
}

/* Python options that take a value (python -W ignore, -X dev, -c code). */
static bool python_option_takes_value(const char *opt)
{
	return !strcmp(opt, "-W") || !strcmp(opt, "-X") || !strcmp(opt, "--check-hash-based-pycs");
}

/* Each unwrap_* returns the argv index the tool's own arguments start at. */
static size_t unwrap_python(struct tool_identity *t, char *const *argv, size_t argc)
{
	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-m") && i + 1 < argc) {
			char mod[TOOL_NAME_MAX];
			copy_string(mod, sizeof(mod), argv[i + 1]);
			char *dot = strchr(mod, '.');
			if (dot)
				*dot = '\0';
			set_program(t, mod);
			return i + 2;
		}
		if (!strcmp(a, "-c") || !strcmp(a, "-"))
			return argc; /* inline code: the tool is python itself */
		if (a[0] == '-') {
			if (python_option_takes_value(a))
				i++;
			continue;
		}
		set_program(t, path_basename(a));
		return i + 1;
	}
	return argc;
}

/* java [options] -jar x.jar ... | java [options] main.Class ... */
static size_t unwrap_java(struct tool_identity *t, char *const *argv, size_t argc)
{
	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-jar") && i + 1 < argc) {
			char jar[TOOL_NAME_MAX];
			copy_string(jar, sizeof(jar), path_basename(argv[i + 1]));
			char *ext = strstr(jar, ".jar");
			if (ext)
				*ext = '\0';
			/* picard-2.27.5 -> picard */
			char *dash = strrchr(jar, '-');
			if (dash && isdigit((unsigned char)dash[1]))
				*dash = '\0';
			set_program(t, jar);
			return i + 2;
		}
		if (!strcmp(a, "-cp") || !strcmp(a, "-classpath") || !strcmp(a, "--class-path")) {
			i++;
			continue;
		}
		if (a[0] == '-')
			continue;
		/* A main class: its last component; Nextflow's launcher is nextflow. */
		const char *dot = strrchr(a, '.');
		set_program(t, strstr(a, "nextflow") ? "nextflow" : dot ? dot + 1 : a);
		return i + 1;
	}
	return argc;
}

/* Rscript x.R, perl -w x.pl, bash -e x.sh (not -c: then the shell is the tool). */
static size_t unwrap_script(struct tool_identity *t, char *const *argv, size_t argc, bool shell)
{
	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i];
		/* Inline code: the interpreter itself is the tool (shells: -c; perl,
		 * ruby, Rscript: -e). For shells -e is just an option. */
		if (!strcmp(a, "-c") || (!shell && !strcmp(a, "-e")))
			return argc;
		if (!strncmp(a, "--file=", 7)) {
			set_program(t, path_basename(a + 7));
			return i + 1;
		}
		if (a[0] == '-' || a[0] == '+')
			continue;
		set_program(t, path_basename(a));
		return i + 1;
	}
	return argc;
}

void tool_identify(const char *exe, char *const *argv, size_t argc, struct tool_identity *out)
{
	const char *base = exe && *exe ? path_basename(exe) : (argc ? path_basename(argv[0]) : "?");
	char program[TOOL_NAME_MAX];
	size_t args_from = 1;

	memset(out, 0, sizeof(*out));
	copy_string(program, sizeof(program), base);
	/* "/usr/bin/python3.11 (deleted)" after an upgrade */
	char *deleted = strstr(program, " (deleted)");
	if (deleted)
		*deleted = '\0';
	set_program(out, program);
	if (is_python(program)) {
		snprintf(out->interpreter, sizeof(out->interpreter), "python");
		args_from = unwrap_python(out, argv, argc);
	} else if (!strcmp(program, "java")) {
		snprintf(out->interpreter, sizeof(out->interpreter), "java");
		args_from = unwrap_java(out, argv, argc);
	} else if (in_list(program, script_interpreters,
			   sizeof(script_interpreters) / sizeof(*script_interpreters)) ||
		   !strcmp(program, "R")) {
		copy_string(out->interpreter, sizeof(out->interpreter), program);
		args_from = unwrap_script(out, argv, argc, false);
	} else if (in_list(program, shells, sizeof(shells) / sizeof(*shells))) {
		copy_string(out->interpreter, sizeof(out->interpreter), program);
		args_from = unwrap_script(out, argv, argc, true);
	}
	/* Multi-command tools, run directly or through an interpreter: keep the verb. */
	if (in_list(out->program, subcommand_tools,
		    sizeof(subcommand_tools) / sizeof(*subcommand_tools)))
		add_subcommand(out, argv, argc, args_from);
}

static void free_entries(struct tool_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].name);
		free(e[i].category);
	}
	free(e);
}

void tool_lists_free(struct tool_lists *l)
{
	free_entries(l->allow, l->n_allow);
	free_entries(l->deny, l->n_deny);
	l->allow = l->deny = NULL;
	l->n_allow = l->n_deny = l->n_deny_exact = 0;
}

/* The categories tools.allow may use; a site adds its own with '@category NAME'. */
static const char *const known_categories[] = {
    "aligner",	       "alignment utility",
    "annotation",      "assembler",
    "basecaller",      "build",
    "compression",     "container",
    "data transfer",   "interval tools",
    "long reads",      "machine learning",
    "metagenomics",    "molecular dynamics",
    "nanopore",	       "notebook",
    "package manager", "peak calling",
    "phylogenetics",   "population genetics",
    "proteomics",      "QC",
    "quantification",  "runtime",
    "scheduler",       "sequence utility",
    "single cell",     "text processing",
    "variant caller",  "variant tools",
    "workflow engine",
};

#define MAX_DECLARED_CATEGORIES 64
#define CATEGORY_DIRECTIVE "@category"

struct categories {
	char declared[MAX_DECLARED_CATEGORIES][64];
	size_t n;
};

static bool category_known(const struct categories *c, const char *name)
{
	for (size_t i = 0; i < sizeof(known_categories) / sizeof(known_categories[0]); i++)
		if (!strcmp(name, known_categories[i]))
			return true;
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(name, c->declared[i]))
			return true;
	return false;
}

/* '@category NAME': a category of the site's own, for the lines below it. */
static const char *declare_category(struct categories *c, const char *line)
{
	const char *name = line + strlen(CATEGORY_DIRECTIVE);
	size_t len;

	while (isspace((unsigned char)*name))
		name++;
	len = strlen(name);
	while (len && isspace((unsigned char)name[len - 1]))
		len--;
	if (!len || len >= sizeof(c->declared[0]))
		return "'@category NAME' takes a name of 1 to 63 characters";
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr(" -_.+", name[i]))
			return "a category is letters, digits, spaces and - _ . +";
	if (c->n == MAX_DECLARED_CATEGORIES)
		return "at most 64 categories of the site's own";
	memcpy(c->declared[c->n], name, len);
	c->declared[c->n++][len] = '\0';
	return NULL;
}

static int load_list(const char *path, bool with_category, struct tool_entry **out, size_t *n_out,
		     char *err, size_t err_size)
{
	FILE *f = fopen(path, "re");
	char line[512];
	struct tool_entry *e = NULL;
	size_t n = 0, cap = 0;
	int lineno = 0;
	struct categories *cats = calloc(1, sizeof(*cats));

	if (!f || !cats) {
		snprintf(err, err_size, "%s: cannot read: %s", path, strerror(f ? ENOMEM : errno));
		if (f)
			fclose(f);
		free(cats);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char name[256] = "", category[256] = "", why[384];
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		int fields = sscanf(line, "%255s %255[^\n]", name, category);
		if (fields <= 0)
			continue;
		for (char *c = category + strlen(category);
		     c > category && isspace((unsigned char)c[-1]);)
			*--c = '\0';
		const char *bad = NULL;
		bool directive = with_category && !strcmp(name, CATEGORY_DIRECTIVE);
		if (directive)
			bad = declare_category(cats, strstr(line, CATEGORY_DIRECTIVE));
		else if (with_category && fields < 2)
			bad = "expected: program category";
		else if (!with_category && fields > 1)
			bad = "expected one program name per line";
		else if (strchr(name, '/') || (strchr(name, '*') && name[strlen(name) - 1] != '*'))
			bad = "a program name has no '/', and '*' only at the end";
		else if (with_category && !category_known(cats, category)) {
			snprintf(why, sizeof(why),
				 "unknown category '%s' (see docs/correlation.md; declare your own "
				 "with '@category NAME' above it)",
				 category);
			bad = why;
		}
		if (bad) {
			snprintf(err, err_size, "%s:%d: %s", path, lineno, bad);
			fclose(f);
			free(cats);
			free_entries(e, n);
			return -1;
		}
		if (directive)
			continue;
		if (!vec_grow(e, cap, n + 1)) {
			fclose(f);
			free(cats);
			free_entries(e, n);
			snprintf(err, err_size, "%s: out of memory", path);
			return -1;
		}
		e[n].name = strdup(name);
		e[n].category = with_category ? strdup(category) : NULL;
		e[n].line = (unsigned)lineno;
		n++;
	}
	fclose(f);
	free(cats);
	*out = e;
	*n_out = n;
	return 0;
}

static bool is_pattern(const struct tool_entry *e)
{
	size_t n = strlen(e->name);

	return n && e->name[n - 1] == '*';
}

/* By name, equal names in file order. */
static int by_name(const void *a, const void *b)
{
	const struct tool_entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* Deny patterns after the exact names, each part by name. */
static int exact_then_patterns(const void *a, const void *b)
{
	int pa = is_pattern(a), pb = is_pattern(b);

	return pa != pb ? pa - pb : by_name(a, b);
}

/* The first entry in e[0 .. n) named name, or NULL. */
static const struct tool_entry *find_exact(const struct tool_entry *e, size_t n, const char *name)
{
	size_t lo = 0, hi = n;

	while (lo < hi) { /* first index whose name is >= name */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(e[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && strcmp(e[lo].name, name) == 0 ? &e[lo] : NULL;
}

int tool_lists_load(struct tool_lists *lists, const char *allow_path, const char *deny_path,
		    char *err, size_t err_size)
{
	struct tool_entry *allow = NULL, *deny = NULL;
	size_t n_allow = 0, n_deny = 0;
	char allow_copy[sizeof(lists->allow_path)], deny_copy[sizeof(lists->deny_path)];

	/* A reload passes lists->allow_path itself: copy before overwriting it. */
	copy_string(allow_copy, sizeof(allow_copy), allow_path ? allow_path : "");
	copy_string(deny_copy, sizeof(deny_copy), deny_path ? deny_path : "");
	err[0] = '\0';
	if (allow_path && load_list(allow_path, true, &allow, &n_allow, err, err_size) != 0)
		return -1;
	if (deny_path && load_list(deny_path, false, &deny, &n_deny, err, err_size) != 0) {
		free_entries(allow, n_allow);
		return -1;
	}
	if (n_allow)
		qsort(allow, n_allow, sizeof(*allow), by_name);
	if (n_deny)
		qsort(deny, n_deny, sizeof(*deny), exact_then_patterns);
	size_t n_exact = 0;
	while (n_exact < n_deny && !is_pattern(&deny[n_exact]))
		n_exact++;
	tool_lists_free(lists);
	lists->n_deny_exact = n_exact;
	lists->allow = allow;
	lists->n_allow = n_allow;
	lists->deny = deny;
	lists->n_deny = n_deny;
	memcpy(lists->allow_path, allow_copy, sizeof(allow_copy));
	memcpy(lists->deny_path, deny_copy, sizeof(deny_copy));
	return 0;
}

const char *tool_category(const struct tool_lists *l, const char *program)
{
	const struct tool_entry *e = find_exact(l->allow, l->n_allow, program);

	return e ? e->category : NULL;
}

bool tool_denied(const struct tool_lists *l, const char *program)
{
	if (find_exact(l->deny, l->n_deny_exact, program))
		return true;
	for (size_t i = l->n_deny_exact; i < l->n_deny; i++) {
		const char *pat = l->deny[i].name;
		if (strncmp(program, pat, strlen(pat) - 1) == 0)
			return true;
	}
	return false;
}
