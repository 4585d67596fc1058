/*
 * Kernel records (bpf/events.h) and /proc snapshots -> packed protobuf
 * Events. The collector only copies and redacts here: no interpretation.
 */
#ifndef TRACER_CONVERT_H
#define TRACER_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/events.h"
#include "common/bytebuf.h"
#include "tracer.pb-c.h"

struct convert_stats {
	uint64_t records;
	uint64_t bad_records; /* wrong size or unknown type */
	uint64_t redactions;
};

/*
 * Converts one ring-buffer record and appends it to out as a packed Event;
 * *type is its event_type_index. Returns 0, 1 if the record was malformed
 * (counted, skipped), -1 on ENOMEM.
 */
int convert_record(const void *data, size_t size, struct bytebuf *out, struct convert_stats *st,
		   int *type);
/* A live sample from the task iterator. 0 or -1 (ENOMEM). */
int convert_sample(const struct tracer_sample *s, struct bytebuf *out);

/* Packs ev and appends it to out as a length-delimited Frame.events entry. */
int append_event(struct bytebuf *out, const Tracer__Event *ev);

/*
 * Splits a NUL-separated argv blob into at most max_args strings (the blob
 * must end with a NUL). A blob cut short mid-argument loses that argument.
 */
unsigned split_argv(char *blob, size_t len, char **argv, unsigned max_args);

/* Leaf-first NUL-separated components -> "/a/b/c" (or ".../b/c" if cut). */
void join_path_components(const char *comps, size_t len, int truncated, char *out, size_t size);

/*
 * Which probe groups feed the counters: fields of inactive groups are left
 * out of every frame, so the database says "unknown" rather than zero.
 */
struct convert_groups {
	bool scheduler, syscalls, network, reclaim;
};
void convert_set_groups(struct convert_groups g);

/* Builds the Counters message from a kernel record. */
void counters_from_kernel(const struct tracer_counters *in, Tracer__Counters *out,
			  int peak_from_signal);

#endif
