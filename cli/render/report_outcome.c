/*
 * How a process image ended, as every page of the run report reads it: the
 * tree and tool lines (report.c) and the summary's failures (report_summary.c).
 */
#include <signal.h>
#include <stdio.h>

#include "cli/render/internal.h"
#include "cli/render/jsonfield.h"

/*
 * A failed process image, as the aggregator counts it in runs and steps: a
 * non-zero exit, or a signal other than SIGPIPE (a producer whose reader
 * stopped reading, `| head`, did not fail).
 */
bool report_process_failed(json_t *p)
{
	if (jhas(p, "signal"))
		return json_integer_value(json_object_get(p, "signal")) != SIGPIPE;
	return jhas(p, "exit_code") && json_integer_value(json_object_get(p, "exit_code")) != 0;
}

const char *report_command_prefix(json_t *p)
{
	return cli_flag(p, "exec_failed") ? "[exec failed in a fork of] " : "";
}

void report_status_text(json_t *p, char *out, size_t size)
{
	const char *state = json_string_value(json_object_get(p, "state"));

	if (jhas(p, "signal"))
		snprintf(out, size, "sig %lld%s",
			 (long long)json_integer_value(json_object_get(p, "signal")),
			 cli_flag(p, "core_dumped") ? "+core" : "");
	else if (jhas(p, "exit_code"))
		snprintf(out, size, "%lld",
			 (long long)json_integer_value(json_object_get(p, "exit_code")));
	else
		snprintf(out, size, "%s", state ? state : "?");
}
