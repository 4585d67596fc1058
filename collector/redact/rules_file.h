/* The collector's redaction rules: a file opened before the privilege drop,
 * reread from the same descriptor on SIGHUP (rules_file.c says why). */
#ifndef TRACER_REDACT_RULES_FILE_H
#define TRACER_REDACT_RULES_FILE_H

#include <stddef.h>

#include "collector/redact/redact.h"
#include "collector/setup/rules_open.h"

/* The rules redact_argv is given in the collector: the file's, or the built-in ones. */
const struct redact_rules *redact_rules_active(void);

/* Opens and loads PATH; the rules become the active ones. 0, or -1 with the reason. */
int redact_rules_file_open(struct redact_rules_file *f, const char *path, char *err,
			   size_t err_size);
/* Rereads the open file: 0; 1 (loaded, with a warning in err); -1 (kept the old rules). */
int redact_rules_file_reload(struct redact_rules_file *f, char *err, size_t err_size);
void redact_rules_file_close(struct redact_rules_file *f);

#endif
