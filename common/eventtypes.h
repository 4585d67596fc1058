/* Names of event types (bpf/events.h), for loss accounting in the collector. */
#ifndef TRACER_EVENTTYPES_H
#define TRACER_EVENTTYPES_H

#include "bpf/events.h"

static inline const char *event_type_name(int t)
{
	static const char *const names[TRACER_EV_COUNT] = {
	    [0] = "other",
	    [TRACER_EV_FORK] = "fork",
	    [TRACER_EV_EXEC] = "exec",
	    [TRACER_EV_EXIT] = "exit",
	    [TRACER_EV_OOM] = "oom",
	    [TRACER_EV_FILE] = "file",
	    [TRACER_EV_FILE_COUNTS] = "file_counts",
	    [TRACER_EV_CGROUP] = "cgroup",
	    [TRACER_EV_EXIT_TAIL] = "exit_tail",
	    [TRACER_EV_CWD] = "cwd",
	    [TRACER_EV_SAMPLE] = "sample",
	};
	return t >= 0 && t < TRACER_EV_COUNT ? names[t] : "other";
}

#endif
