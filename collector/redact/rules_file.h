/* The collector's redaction rules: a file opened before the privilege drop,
 * reread from the same descriptor on SIGHUP (rules_file.c says why). */
#ifndef TRACER_REDACT_RULES_FILE_H
#define TRACER_REDACT_RULES_FILE_H

#include <stddef.h>

#include "collector/redact/redact.h"

#define REDACT_RULES_DEFAULT "/etc/tracer/redact.rules"

struct redact_rules_file {
	int fd;
	char path[4096];
	struct redact_rules *rules;
};

/* The rules redact_argv is given in the collector: the file's, or the built-in ones. */
const struct redact_rules *redact_rules_active(void);

/* REDACT_RULES_DEFAULT, else deploy/etc/redact.rules beside the program (a build
 * tree), into buf; NULL if neither is readable (the built-in rules apply). */
const char *redact_rules_file_find(char *buf, size_t size);

/* Opens and loads PATH; the rules become the active ones. 0, or -1 with the reason. */
int redact_rules_file_open(struct redact_rules_file *f, const char *path, char *err,
			   size_t err_size);
/* Rereads the open file: 0; 1 (loaded, with a warning in err); -1 (kept the old rules). */
int redact_rules_file_reload(struct redact_rules_file *f, char *err, size_t err_size);
void redact_rules_file_close(struct redact_rules_file *f);

#endif
