/*
 * A daemon's options from one table: each entry names the option, its config-file key,
 * type, range, default and help, and the table drives getopt_long, the INI settings
 * file, --help and the example settings file (--print-config, what deploy/etc ships).
 * Order of precedence: the defaults, then the settings file, then the command line.
 */
#ifndef TRACER_OPTIONS_H
#define TRACER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum opt_kind {
	OPT_TEXT, /* a string, kept as given (a config file's value is copied) */
	OPT_UINT, /* a decimal integer in [min, max], stored times scale */
	OPT_FD,	  /* a descriptor number 0..65535; -1 when not given */
	OPT_FLAG, /* no argument: sets a bool */
	OPT_BOOL, /* on/off, yes/no, true/false, 1/0 */
	OPT_CALL, /* the entry's own parse function */
};

struct opt;
/* Parses value into the options struct. 0, or -1 with the problem in why. */
typedef int (*opt_parse_fn)(void *target, const struct opt *o, const char *value, char *why,
			    size_t size);

struct opt {
	const char *name;    /* --name; NULL: a settings-file key only */
	const char *section; /* the settings file's section; NULL: command line only */
	const char *key;     /* the key there (default: name); '-' and '_' are the same */
	const char *alias;   /* an older key still read */
	enum opt_kind kind;
	const char *arg;	       /* what --help calls the value: PATH, N */
	unsigned long min, max, scale; /* OPT_UINT (scale 0 means 1) */
	const char *def;	       /* the default, as one would write it; NULL: none */
	const char *shown;   /* the default --help states when def cannot (it is worked out) */
	const char *example; /* a value the example settings file shows, commented out */
	size_t offset, size; /* the field it sets (OPT_CALL: none) */
	opt_parse_fn parse;  /* OPT_CALL, or an extra check after OPT_UINT's range */
	const char *why;     /* the complaint for a bad value (default: the range) */
	const char *help;
	bool required;
};

#define OPT_FIELD(type, member) offsetof(type, member), sizeof(((type *)0)->member)

struct opt_section {
	const char *name;
	const char *comment; /* the example file's comment above it */
	const char *unknown; /* the complaint for a key it lacks (default "unknown setting") */
};

struct opt_program {
	const char *name;  /* tracer-collector */
	const char *usage; /* the line after "usage: " */
	const char *version;
	const struct opt *opts;
	size_t n_opts;
	const struct opt_section *sections; /* the ones it reads, in the example's order */
	size_t n_sections;
	size_t target_size;	    /* sizeof the options struct */
	void (*init)(void *target); /* defaults a table of its own holds (NULL: none) */
	const char *default_config; /* read when present and no --config is given */
	const char *notes;	    /* --help's last lines */
	const char *config_header;  /* the example settings file's opening comment */
};

/* --log-level LEVEL, the same in every daemon. */
int opt_parse_log_level(void *target, const struct opt *o, const char *value, char *why,
			size_t size);
#define OPT_LOG_LEVEL                                                                              \
	{                                                                                          \
		.name = "log-level", .kind = OPT_CALL, .arg = "LEVEL",                             \
		.parse = opt_parse_log_level, .shown = "info",                                     \
		.help = "error, warn, info or debug"                                               \
	}

/* The table's defaults into target (zeroed first; OPT_FD fields -1). */
void options_defaults(const struct opt_program *p, void *target);
/*
 * Defaults, the settings file(s) of --config (or default_config), then argv. --help,
 * --version and --print-config print and exit 0. 0, or -1 after saying why on stderr.
 */
int options_parse(const struct opt_program *p, int argc, char **argv, void *target);
/* One settings file into target: nothing is applied on error. 0, or -1 with the file,
 * line and problem in err. */
int options_load_file(const struct opt_program *p, const char *path, void *target, char *err,
		      size_t size);
/* One setting, as the file would give it. 0, or -1 with "[section] key = value: why". */
int options_set_key(const struct opt_program *p, const char *section, const char *key,
		    const char *value, void *target, char *err, size_t size);
void options_usage(const struct opt_program *p, FILE *out);
void options_print_config(const struct opt_program *p, FILE *out);
/* Table mistakes (a default out of range, a name twice, no help): 0, or -1 with why. */
int options_check_table(const struct opt_program *p, char *err, size_t size);

#endif
