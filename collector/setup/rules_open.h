/*
 * The redaction rules file, opened as root before the privilege drop and only
 * opened: redact/rules_file.c reads and parses it after the drop, and rereads
 * it from the same descriptor on SIGHUP.
 */
#ifndef TRACER_SETUP_RULES_OPEN_H
#define TRACER_SETUP_RULES_OPEN_H

#include <stddef.h>

#define REDACT_RULES_DEFAULT "/etc/tracer/redact.rules"

struct redact_rules;

struct redact_rules_file {
	int fd;
	char path[4096];
	struct redact_rules *rules; /* parsed after the drop (redact/rules_file.c) */
};

/* REDACT_RULES_DEFAULT, else deploy/etc/redact.rules beside the program (a build
 * tree), into buf; NULL if neither is readable (the built-in rules apply). */
const char *redact_rules_file_find(char *buf, size_t size);

/* Opens PATH, reads nothing. 0, or -1 with the reason in err. */
int redact_rules_file_open_fd(struct redact_rules_file *f, const char *path, char *err,
			      size_t err_size);

#endif
