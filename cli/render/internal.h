/*
 * What the files of render/ share, and nothing outside render/ may use.
 * render/ turns what it is given (JSON rows and documents, numbers) into what
 * people and programs read; it never opens the database, runs a query or
 * starts a process (test/lint/layers.py fails on sqlite3 here), and includes
 * no other layer of the CLI.
 *   report.c          the run report: header, steps and tools, process tree, --json
 *   report_summary.c  the run report in a screenful, for a run whose tree would not fit
 *   report_outcome.c  how a process image ended: failed or not, "0", "sig 9+core"
 *   containers_text.c the containers a run started, as lines (sections.h)
 *   batch_text.c      a run's batch jobs and the work it handed elsewhere (sections.h)
 *   status_text.c     tracer status for people, from its JSON document
 *   explain.c         the sentence that says where a run's or step's time went
 *   export.c          --format tsv|csv|json rows for other programs (docs/export.md)
 *   format.c          units people read: 1m32s, 512 MiB, columns cut to a width
 *   termsafe.c        no control byte of the database reaches a terminal
 *   clierror.c        a verb's failure: one line on stderr, and {"error"} with JSON
 *   jsonfield.h       reading a field of a JSON row: jint, jnum, jstr, jhas, cli_flag
 *   report_template.html  the page tracer report fills (embedded at build time)
 */
#ifndef TRACER_CLI_RENDER_INTERNAL_H
#define TRACER_CLI_RENDER_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "cli/render/report.h"

/* report_outcome.c: "0", "2", "sig 9+core" or the state of a process without an end. */
void report_status_text(json_t *p, char *out, size_t size);
/* report_summary.c: the summary part of a report (after its header): o->structure's longest
 * steps, the failed processes, where the rest is. */
void report_summary_print(FILE *out, json_t *run, json_t *totals, const struct report_opts *o);

#endif
