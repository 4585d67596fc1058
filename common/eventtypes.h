/* Names of event types, for loss accounting shared by collector and aggregator. */
#ifndef TRACER_EVENTTYPES_H
#define TRACER_EVENTTYPES_H

/* Index space for per-type counters: the kernel event types, then samples. */
enum event_type_index {
	EVT_FORK = 1,
	EVT_EXEC = 2,
	EVT_EXIT = 3,
	EVT_OOM = 4,
	EVT_FILE = 5,
	EVT_FILE_COUNTS = 6,
	EVT_CGROUP = 7,
	EVT_SAMPLE = 8,
	EVT_COUNT = 9,
};

static inline const char *event_type_name(int t)
{
	static const char *const names[EVT_COUNT] = {
	    "other", "fork", "exec", "exit", "oom", "file", "file_counts", "cgroup", "sample",
	};
	return t >= 0 && t < EVT_COUNT ? names[t] : "other";
}

#endif
