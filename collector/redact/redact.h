/*
 * Secret redaction for argv, applied in the collector before anything leaves
 * it. It decides by the structure of a command line (docs/redaction.md lists
 * the rules): option and variable names that say credential, per-tool rules
 * from a data file (deploy/etc/redact.rules), code and shell strings, token
 * formats, URLs. Over-redaction is preferred to a leak.
 *
 * redact_argv is a pure function of its argv and its rules: it reads nothing
 * else and needs no privilege.
 */
#ifndef TRACER_REDACT_H
#define TRACER_REDACT_H

#include <stddef.h>

#define REDACTED "***"

struct redact_rules;

/* Is this option or variable name one that carries a secret? */
int redact_key_is_sensitive(const char *key, size_t len);

/*
 * Redacts argc arguments into out (NUL-separated, out_size bytes), pointing
 * out_argv[i] at each result. An argument that does not fit is replaced by
 * REDACTED entirely. RULES NULL: the rules built in (deploy/etc/redact.rules
 * as it was built). Returns the number of redactions made.
 */
unsigned redact_argv(const struct redact_rules *rules, char *const *argv, unsigned argc, char *out,
		     size_t out_size, char **out_argv);

/*
 * Parses a rules file's text. NULL with the line and problem in err on a bad
 * line (nothing half-loaded) or ENOMEM. Free with redact_rules_free.
 */
struct redact_rules *redact_rules_parse(const char *text, size_t len, char *err, size_t err_size);
void redact_rules_free(struct redact_rules *r);
/* The rules built in: deploy/etc/redact.rules as it was at build time. */
const struct redact_rules *redact_rules_builtin(void);
unsigned redact_rules_count(const struct redact_rules *r);

#endif
