/* tracer status for people: the verdict, the database, each collector, losses, shipping. */
#ifndef TRACER_CLI_STATUS_TEXT_H
#define TRACER_CLI_STATUS_TEXT_H

#include <jansson.h>

/* The text of the document cmd_status.c builds (its --json), on stdout. */
void status_print_text(json_t *doc);

#endif
