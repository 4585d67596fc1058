#include "common/options.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <ini.h>

#include "common/confkey.h"
#include "common/log.h"

#define HELP_COLUMN 26 /* where --help's text starts */
#define WIDTH 79
#define MAX_OPTS 64
#define MAX_SECTIONS 8
#define MAX_CONFIGS 8
/* getopt_long's values: an entry's index above these; the built-in options below. */
#define VAL_BASE 256
enum { VAL_HELP = 1, VAL_VERSION, VAL_PRINT_CONFIG, VAL_CONFIG };

/* At the field's own width (1, 2, 4 or 8 bytes): a union's members all begin at its start. */
static void store_uint(void *target, const struct opt *o, uint64_t v)
{
	union {
		uint8_t u8;
		uint16_t u16;
		uint32_t u32;
		uint64_t u64;
	} x = {.u64 = v};

	if (o->size == 1)
		x.u8 = (uint8_t)v;
	else if (o->size == 2)
		x.u16 = (uint16_t)v;
	else if (o->size == 4)
		x.u32 = (uint32_t)v;
	memcpy((char *)target + o->offset, &x, o->size < sizeof(x) ? o->size : sizeof(x));
}

static int parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = {"on", "yes", "true", "1"}, *const no[] = {"off", "no",
										    "false", "0"};

	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++) {
		if (!strcasecmp(v, yes[i]) || !strcasecmp(v, no[i])) {
			*out = !strcasecmp(v, yes[i]);
			return 0;
		}
	}
	return -1;
}

static int parse_number(const char *v, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(v, &end, 10);
	return errno || end == v || *end || v[0] == '-' || *out < lo || *out > hi ? -1 : 0;
}

/* A settings file's text, kept for the program's life (and reachable, for LeakSanitizer). */
static const char *keep(const char *value)
{
	static char *kept[256];
	static size_t n_kept;

	if (n_kept == sizeof(kept) / sizeof(*kept) || !(kept[n_kept] = strdup(value)))
		return NULL;
	return kept[n_kept++];
}

/* One value into its field; copy: the text is a settings file's, gone after the call. */
static int set_value(const struct opt *o, const char *value, bool copy, void *target, char *why,
		     size_t size)
{
	unsigned long n;
	bool b;

	switch (o->kind) {
	case OPT_TEXT: {
		const char *text = copy ? keep(value) : value;
		if (!text) {
			snprintf(why, size, "too many settings, or out of memory");
			return -1;
		}
		memcpy((char *)target + o->offset, &text, sizeof(text));
		return 0;
	}
	case OPT_UINT:
		if (parse_number(value, o->min, o->max, &n) != 0)
			break;
		store_uint(target, o, (uint64_t)n * (o->scale ? o->scale : 1));
		return 0;
	case OPT_FD:
		if (parse_number(value, 0, 65535, &n) != 0)
			break;
		store_uint(target, o, n);
		return 0;
	case OPT_FLAG:
		b = true;
		memcpy((char *)target + o->offset, &b, sizeof(b));
		return 0;
	case OPT_BOOL:
		if (parse_bool(value, &b) != 0)
			break;
		memcpy((char *)target + o->offset, &b, sizeof(b));
		return 0;
	case OPT_CALL:
		return o->parse(target, o, value, why, size);
	}
	if (o->why)
		snprintf(why, size, "%s", o->why);
	else if (o->kind == OPT_UINT)
		snprintf(why, size, "expected %lu..%lu", o->min, o->max);
	else
		snprintf(why, size, o->kind == OPT_FD ? "bad descriptor" : "expected on or off");
	return -1;
}

int opt_parse_log_level(void *target, const struct opt *o, const char *value, char *why,
			size_t size)
{
	if (log_set_level_name(value) == 0)
		return 0;
	snprintf(why, size, "unknown log level");
	return -1;
}

void options_defaults(const struct opt_program *p, void *target)
{
	char why[256];

	memset(target, 0, p->target_size);
	for (size_t i = 0; i < p->n_opts; i++) {
		const struct opt *o = &p->opts[i];
		if (o->kind == OPT_FD)
			store_uint(target, o, (uint64_t)-1);
		else if (o->def && set_value(o, o->def, false, target, why, sizeof(why)) != 0)
			abort(); /* options_check_table (make unit) catches it first */
	}
	if (p->init)
		p->init(target);
}

static const char *key_of(const struct opt *o)
{
	return o->key ? o->key : o->name;
}

static const struct opt *find_key(const struct opt_program *p, const char *section,
				  const char *name)
{
	for (size_t i = 0; i < p->n_opts; i++) {
		const struct opt *o = &p->opts[i];
		if (o->section && !strcmp(o->section, section) &&
		    (config_key_is(name, key_of(o)) || (o->alias && config_key_is(name, o->alias))))
			return o;
	}
	return NULL;
}

static const char *unknown_why(const struct opt_program *p, const char *section)
{
	for (size_t i = 0; i < p->n_sections; i++)
		if (!strcmp(p->sections[i].name, section) && p->sections[i].unknown)
			return p->sections[i].unknown;
	return "unknown setting";
}

static int set_key(const struct opt_program *p, const char *section, const char *name,
		   const char *value, void *target, char *err, size_t size)
{
	const struct opt *o = find_key(p, section, name);
	char why[400];

	if (!o)
		snprintf(why, sizeof(why), "%s", unknown_why(p, section));
	else if (set_value(o, value, true, target, why, sizeof(why)) == 0)
		return 0;
	snprintf(err, size, "[%s] %s = %s: %s", section, name, value, why);
	return -1;
}

int options_set_key(const struct opt_program *p, const char *section, const char *key,
		    const char *value, void *target, char *err, size_t size)
{
	return set_key(p, section, key, value, target, err, size);
}

struct load_state {
	const struct opt_program *p;
	void *target;
	const char *mine[MAX_SECTIONS + 1];
	char err[600];
};

/* inih calls this per key; returning 0 stops with that line's number. */
static int on_entry(void *user, const char *section, const char *name, const char *value)
{
	struct load_state *st = user;
	bool mine;
	const char *why = config_section_check(section, st->mine, &mine);

	if (!why && !mine)
		return 1; /* another program's section in a shared file */
	if (why) {	  /* a typo'd section would otherwise drop its settings silently */
		char reads[200] = "";
		for (size_t i = 0; st->mine[i]; i++)
			snprintf(reads + strlen(reads), sizeof(reads) - strlen(reads), "%s[%s]",
				 i ? ", " : "", st->mine[i]);
		snprintf(st->err, sizeof(st->err), "%s%s%s%s = %s: %s (%s reads %s)",
			 section[0] ? "[" : "", section, section[0] ? "] " : "", name, value, why,
			 st->p->name, reads);
		return 0;
	}
	return set_key(st->p, section, name, value, st->target, st->err, sizeof(st->err)) == 0;
}

int options_load_file(const struct opt_program *p, const char *path, void *target, char *err,
		      size_t size)
{
	struct load_state st = {.p = p};
	void *copy = malloc(p->target_size);
	int line;

	if (!copy) {
		snprintf(err, size, "%s: out of memory", path);
		return -1;
	}
	memcpy(copy, target, p->target_size);
	st.target = copy;
	for (size_t i = 0; i < p->n_sections && i < MAX_SECTIONS; i++)
		st.mine[i] = p->sections[i].name;
	line = ini_parse(path, on_entry, &st);
	if (line < 0)
		snprintf(err, size, "%s: cannot read: %s", path, strerror(errno));
	else if (line > 0)
		snprintf(err, size, "%s:%d: %s", path, line, st.err[0] ? st.err : "syntax error");
	else
		memcpy(target, copy, p->target_size);
	free(copy);
	return line == 0 ? 0 : -1;
}

static size_t build_longopts(const struct opt_program *p, struct option *lo)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_opts && n < MAX_OPTS; i++)
		if (p->opts[i].name)
			lo[n++] = (struct option){p->opts[i].name,
						  p->opts[i].kind == OPT_FLAG ? no_argument
									      : required_argument,
						  NULL, VAL_BASE + (int)i};
	lo[n++] = (struct option){"help", no_argument, NULL, VAL_HELP};
	lo[n++] = (struct option){"version", no_argument, NULL, VAL_VERSION};
	lo[n++] = (struct option){"print-config", no_argument, NULL, VAL_PRINT_CONFIG};
	if (p->n_sections)
		lo[n++] = (struct option){"config", required_argument, NULL, VAL_CONFIG};
	lo[n] = (struct option){0};
	return n;
}

/* The first pass: what prints and exits, and the settings files to read first. */
static int first_pass(const struct opt_program *p, int argc, char **argv, const struct option *lo,
		      const char **configs, size_t *n_configs)
{
	int c;

	*n_configs = 0;
	optind = 0; /* glibc: start over, as after a previous parse */
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'h' || c == VAL_HELP) {
			options_usage(p, stdout);
			exit(0);
		}
		if (c == VAL_VERSION) {
			printf("%s %s\n", p->name, p->version);
			exit(0);
		}
		if (c == VAL_PRINT_CONFIG) {
			options_print_config(p, stdout);
			exit(0);
		}
		if (c == '?') {
			options_usage(p, stderr);
			return -1;
		}
		if (c == VAL_CONFIG && *n_configs < MAX_CONFIGS)
			configs[(*n_configs)++] = optarg;
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", p->name, argv[optind]);
		return -1;
	}
	if (!*n_configs && p->default_config && access(p->default_config, F_OK) == 0)
		configs[(*n_configs)++] = p->default_config;
	return 0;
}

static int given(const struct opt_program *p, int argc, char **argv, const struct option *lo,
		 void *target, bool *seen)
{
	char why[600];
	int c;

	optind = 0; /* glibc: start over, as after a previous parse */
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c < VAL_BASE)
			continue;
		const struct opt *o = &p->opts[c - VAL_BASE];
		why[0] = '\0';
		if (set_value(o, optarg ? optarg : "", false, target, why, sizeof(why)) != 0) {
			fprintf(stderr, "%s: --%s%s%s: %s\n", p->name, o->name, optarg ? " " : "",
				optarg ? optarg : "", why);
			return -1;
		}
		seen[c - VAL_BASE] = true;
	}
	return 0;
}

int options_parse(const struct opt_program *p, int argc, char **argv, void *target)
{
	struct option lo[MAX_OPTS + 5];
	const char *configs[MAX_CONFIGS];
	bool seen[MAX_OPTS] = {false};
	size_t n_configs;
	char err[800];

	options_defaults(p, target);
	build_longopts(p, lo);
	if (first_pass(p, argc, argv, lo, configs, &n_configs) != 0)
		return -1;
	for (size_t i = 0; i < n_configs; i++) {
		if (options_load_file(p, configs[i], target, err, sizeof(err)) != 0) {
			fprintf(stderr, "%s: %s\n", p->name, err);
			return -1;
		}
	}
	if (given(p, argc, argv, lo, target, seen) != 0)
		return -1;
	for (size_t i = 0; i < p->n_opts && i < MAX_OPTS; i++) {
		const struct opt *o = &p->opts[i];
		const char *const *v =
		    (const char *const *)(const void *)((char *)target + o->offset);
		if (o->required && o->kind == OPT_TEXT && !*v) {
			fprintf(stderr, "%s: --%s %s is required\n", p->name, o->name, o->arg);
			options_usage(p, stderr);
			return -1;
		}
	}
	return 0;
}

/* Writes text after lead (already written, col wide), wrapped at WIDTH, later lines
 * starting with indent. */
static void wrap(FILE *out, size_t col, const char *text, const char *indent)
{
	const char *w = text;

	while (*w) {
		size_t len = strcspn(w, " ");
		if (col + 1 + len > WIDTH && col > strlen(indent)) {
			fprintf(out, "\n%s", indent);
			col = strlen(indent);
		} else if (w != text) {
			fputc(' ', out);
			col++;
		}
		fprintf(out, "%.*s", (int)len, w);
		col += len;
		w += len;
		while (*w == ' ')
			w++;
	}
	fputc('\n', out);
}

static const char *default_text(const struct opt *o)
{
	if (o->shown)
		return o->shown;
	return o->kind == OPT_FD || o->kind == OPT_FLAG ? NULL : o->def;
}

void options_usage(const struct opt_program *p, FILE *out)
{
	char label[128], text[1024], config_def[300];
	static const struct opt builtin[] = {
	    {.name = "config", .arg = "PATH", .help = "settings file, read before the options"},
	    {.name = "print-config", .help = "print the settings file with every default; exit"},
	    {.name = "version", .help = "print the version and exit"},
	    {.name = "help", .help = "print this and exit"},
	};

	snprintf(config_def, sizeof(config_def), "%s if present",
		 p->default_config ? p->default_config : "");
	fprintf(out, "usage: %s\n", p->usage);
	for (size_t i = 0; i < p->n_opts + sizeof(builtin) / sizeof(*builtin); i++) {
		const struct opt *o = i < p->n_opts ? &p->opts[i] : &builtin[i - p->n_opts];
		if (!o->name || (o == &builtin[0] && !p->n_sections))
			continue;
		int n = snprintf(label, sizeof(label), "  --%s%s%s", o->name, o->arg ? " " : "",
				 o->arg ? o->arg : "");
		const char *def = o != &builtin[0]    ? default_text(o)
				  : p->default_config ? config_def
						      : NULL;
		snprintf(text, sizeof(text), "%s%s%s%s", o->help, def ? " (default " : "",
			 def ? def : "", def ? ")" : "");
		fputs(label, out);
		if (n + 2 > HELP_COLUMN) {
			fputs("  ", out);
			n += 2;
		} else {
			fprintf(out, "%*s", HELP_COLUMN - n, "");
			n = HELP_COLUMN;
		}
		wrap(out, (size_t)n, text, "                          ");
	}
	if (p->notes)
		fputs(p->notes, out);
}

void options_print_config(const struct opt_program *p, FILE *out)
{
	fputs(p->config_header, out);
	for (size_t s = 0; s < p->n_sections; s++) {
		const struct opt_section *sec = &p->sections[s];
		fprintf(out, "\n[%s]\n", sec->name);
		if (sec->comment) {
			fputs("# ", out);
			wrap(out, 2, sec->comment, "# ");
		}
		for (size_t i = 0; i < p->n_opts; i++) {
			const struct opt *o = &p->opts[i];
			if (!o->section || strcmp(o->section, sec->name))
				continue;
			fputs("# ", out);
			wrap(out, 2, o->help, "# ");
			if (o->def)
				fprintf(out, "%s = %s\n", key_of(o), o->def);
			else if (o->example || o->arg)
				fprintf(out, "%s%s = %s\n", o->required ? "" : "# ", key_of(o),
					o->example ? o->example : o->arg);
		}
	}
}

int options_check_table(const struct opt_program *p, char *err, size_t size)
{
	char why[400];
	void *target = calloc(1, p->target_size);

	for (size_t i = 0; i < p->n_opts && target; i++) {
		const struct opt *o = &p->opts[i];
		const char *what = NULL;
		if (!o->help || (!o->name && !o->section))
			what = "no help, or neither an option nor a key";
		else if ((o->kind == OPT_CALL) != (o->parse != NULL))
			what = "a parse function is for OPT_CALL alone";
		else if (o->def && set_value(o, o->def, false, target, why, sizeof(why)) != 0)
			what = "its default is refused";
		else if (o->kind != OPT_CALL && o->offset + o->size > p->target_size)
			what = "its field is outside the struct";
		for (size_t j = 0; j < i && !what; j++) {
			const struct opt *q = &p->opts[j];
			if (o->name && q->name && !strcmp(o->name, q->name))
				what = "its name is taken";
			else if (o->section && q->section && !strcmp(o->section, q->section) &&
				 config_key_is(key_of(o), key_of(q)))
				what = "its key is taken";
		}
		if (what) {
			snprintf(err, size, "%s: entry %zu (%s): %s", p->name, i,
				 o->name ? o->name : key_of(o), what);
			free(target);
			return -1;
		}
	}
	free(target);
	return p->n_opts <= MAX_OPTS ? 0 : -1;
}
