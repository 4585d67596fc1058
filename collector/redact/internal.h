/*
 * collector/redact/: argv redaction, a file per concern. Each reads only its
 * arguments (argv and rules): no file, no environment, no privilege.
 *
 *   redact.h      the API
 *   argv.c        redact_argv: each argument with its command, the words before
 *                 it, its place (positional secrets)
 *   words.c       a whole word that is a secret by its command's structure: the
 *                 value of --password or --src-creds, a tool's rule, a setting
 *   inside.c      the rules that look inside one word (pairs, code, URLs, tokens)
 *   keys.c        does a name say credential (--db-pass, AccountKey, /p:), and
 *                 is its value one (a path or a count is not)
 *   rules.c       per-tool rules: parsing deploy/etc/redact.rules, matching a
 *                 command's words against them
 *   rules_file.c  the collector's rules: the file setup/rules_open.c opened
 *                 as root, parsed here after the privilege drop, reread from
 *                 the same open file on SIGHUP
 *   pairs.c       NAME=VALUE, headers, Windows /name:value, user:secret@host,
 *                 Oracle's user/secret logins
 *   code.c        code strings (-c, -e, --eval): quoted keys, NAME = 'x',
 *                 auth=('user', 'x')
 *   shell.c       shell strings: word by word with each command's rules, quoted
 *                 strings inside them, what is piped into a reader of secrets
 *   tokens.c      token formats, wherever they stand
 *   urls.c        URLs' userinfo and webhook paths (their query parameters are
 *                 NAME=VALUE pairs)
 *   spans.c       the secrets found in an argument, and writing it without them
 *
 * Calls go one way: argv.c -> shell.c (find_word_secrets, recursive for shell
 * strings inside shell strings) -> words.c -> rules.c -> inside.c -> pairs.c,
 * code.c, urls.c, tokens.c -> keys.c; spans.c is everyone's.
 */
#ifndef TRACER_REDACT_INTERNAL_H
#define TRACER_REDACT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "collector/redact/redact.h"

#define KEY_MAX 256 /* longer keys are treated as sensitive: when in doubt, redact */
#define MAX_SPANS 32
#define NEST_MAX 4 /* shell strings inside shell strings, read this deep */

/* --- spans.c --- */
struct span {
	size_t start;
	size_t end;
};
struct spans {
	struct span s[MAX_SPANS];
	unsigned n;
	bool overflow;
};
void spans_clear(struct spans *sp);
void add_span(struct spans *sp, size_t start, size_t end);
/* Adds SRC's spans, moved by OFFSET; an overflow hides [ostart, oend). */
void add_spans_at(struct spans *sp, const struct spans *src, size_t offset, size_t ostart,
		  size_t oend);
/* ARG with the spans replaced: bytes written incl. NUL, 0 if no room. */
size_t write_redacted(const char *arg, size_t len, struct spans *sp, char *out, size_t cap);

/* --- keys.c --- */
enum key_class {
	KEY_PLAIN = 0, /* names no secret */
	KEY_SECRET,    /* --password, API_TOKEN */
	KEY_AMBIGUOUS, /* --key, PASS, --auth: a path, a count or a sort spec is no secret */
};
enum key_class key_classify(const char *key, size_t len);
/* Whether a value given to KEY hides a secret: KEY_SECRET always, KEY_AMBIGUOUS
 * unless the value is a path, a file name, a small number or a sort key. */
bool key_hides_value(const char *key, size_t klen, const char *value, size_t vlen);
/* --creds user:X, --src-creds: the user before the colon stays. */
bool key_keeps_user(const char *key, size_t len);
/* --password-stdin, -o password_stdin: a secret comes on standard input. */
bool key_reads_secret_stdin(const char *word, size_t len);
bool is_key_char(char c);
bool in_list(const char *word, size_t len, const char *const *list, size_t n);

/* --- rules.c --- */
#define CMD_WORDS 12
#define CMD_WORD_LEN 32
/* One command of a command line as the rules see it. */
struct command {
	char tool[64];
	unsigned rule_lo, rule_hi;	     /* the tool's rules: a range of the rules' */
	char words[CMD_WORDS][CMD_WORD_LEN]; /* its words that are no option */
	unsigned nwords;		     /* how many (more than stored, past CMD_WORDS) */
	bool reads_secret;		     /* a stdin rule matched: its input is a secret */
	bool configures;		     /* a `config` or `configure` word: settings follow */
	bool at_tool;			     /* no word seen yet after the tool's name */
	bool store_opened, store_verb;	     /* `secret`/`kv`/vault and a verb that writes */
	int after_secrets_set;		     /* words since `secrets set`, or -1 */
};
void command_start(struct command *c, const struct redact_rules *r, const char *tool);
void command_see(struct command *c, const struct redact_rules *r, const char *word, size_t len);
/* Where in WORD the tool's rules put a secret (0: all of it), or -1. */
long command_rule_secret(const struct command *c, const struct redact_rules *r, const char *prev,
			 const char *word, size_t len);
/* A `last` rule applies: the command's last word that is no option is a secret. */
bool command_last_is_secret(const struct command *c, const struct redact_rules *r);
/* A tool some rule names: its name further along a command line starts its arguments. */
bool rules_name_tool(const struct redact_rules *r, const char *name);
/* `openssl passwd`: a word the tool's rules take as a subcommand, not a new tool. */
bool rules_name_subcommand(const struct redact_rules *r, const char *tool, const char *word);
/* A tool named inside a command (sudo -S ... cryptsetup): its own rules start,
 * what the wrapper reads on stdin is still a secret. */
void command_switch(struct command *c, const struct redact_rules *r, const char *tool);

/* --- words.c --- */
/* Where the structure alone makes WORD (or its end) a secret: 0 for all of it, -1 for none. */
long word_structural_secret(const struct redact_rules *r, const struct command *c,
			    const char *prev2, const char *prev, const char *word, size_t len);

/* --- inside.c --- */
/* Every rule that finds a secret inside one argument or word, whatever its command. */
void find_secrets(const char *arg, size_t len, struct spans *sp);

/* --- pairs.c --- */
void find_pairs(const char *arg, size_t len, struct spans *sp);
void find_header_at(const char *arg, size_t from, size_t len, struct spans *sp);
void find_windows_option(const char *arg, size_t len, struct spans *sp);
void find_user_at_host(const char *arg, size_t len, struct spans *sp);
void find_oracle_login(const char *tool, const char *arg, size_t len, struct spans *sp);

/* --- code.c --- */
void find_quoted_keys(const char *arg, size_t len, struct spans *sp);
void find_code_assignments(const char *arg, size_t len, struct spans *sp);

/* --- shell.c --- */
/* Every rule for one word of a command (an argument, depth 0, or a shell
 * string's word, depth -1): spans relative to WORD. An argument that is a
 * shell string is read word by word. */
void find_word_secrets(const struct redact_rules *r, const struct command *c, const char *prev2,
		       const char *prev, const char *word, size_t len, struct spans *sp, int depth);
void find_shell_words(const struct redact_rules *r, const char *arg, size_t len, struct spans *sp,
		      int depth);
void find_nested_words(const struct redact_rules *r, const char *word, size_t len, struct spans *sp,
		       int depth);

/* --- tokens.c --- */
void find_token_shapes(const char *arg, size_t len, struct spans *sp);

/* --- urls.c --- */
void find_url_credentials(const char *arg, size_t len, struct spans *sp);

#endif
