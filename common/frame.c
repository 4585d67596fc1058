#include "common/frame.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytebuf.h"

static const char *const error_names[] = {
    [FRAME_OK] = "ok",
    [FRAME_TOO_BIG] = "too big",
    [FRAME_UNDECODABLE] = "not a valid protobuf frame",
    [FRAME_BAD_VERSION] = "unsupported frame version",
    [FRAME_BAD_HEADER] = "invalid frame header",
    [FRAME_BAD_EVENT] = "invalid event",
};

const char *frame_error_name(enum frame_error err)
{
	if ((unsigned)err < sizeof(error_names) / sizeof(error_names[0]))
		return error_names[err];
	return "unknown";
}

int frame_encode(const Tracer__Frame *f, uint8_t **out, size_t *len)
{
	size_t size = tracer__frame__get_packed_size(f);
	uint8_t *buf = malloc(size ? size : 1);

	if (!buf)
		return -1;
	*len = tracer__frame__pack(f, buf);
	*out = buf;
	return 0;
}

size_t frame_oldest_seq_tail(uint64_t oldest_seq, uint8_t out[FRAME_OLDEST_SEQ_TAIL])
{
	/* The field number from the generated descriptor, so it follows the .proto. */
	const ProtobufCFieldDescriptor *field = protobuf_c_message_descriptor_get_field_by_name(
	    &tracer__frame__descriptor, "oldest_seq");

	out[0] = (uint8_t)(field->id << 3); /* wire type 0: varint; the id is below 16 */
	return (size_t)(varint_put(out + 1, oldest_seq) - out);
}

static enum frame_error fail(enum frame_error err, char *why, size_t why_size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static enum frame_error fail(enum frame_error err, char *why, size_t why_size, const char *fmt, ...)
{
	va_list ap;

	if (why && why_size) {
		va_start(ap, fmt);
		vsnprintf(why, why_size, fmt, ap);
		va_end(ap);
	}
	return err;
}

static int string_ok(const char *s, size_t max)
{
	return !s || strnlen(s, max + 1) <= max;
}

static int exec_ok(const Tracer__ExecEvent *x, const char **what)
{
	size_t argv_bytes = 0;

	if (x->pid == 0 || x->start_ns == 0) {
		*what = "exec without pid or start time";
		return 0;
	}
	if (!string_ok(x->comm, FRAME_MAX_COMM) || !string_ok(x->exe, FRAME_MAX_PATH) ||
	    !string_ok(x->cwd, FRAME_MAX_PATH)) {
		*what = "exec string too long";
		return 0;
	}
	if (x->n_argv > FRAME_MAX_ARGS) {
		*what = "too many arguments";
		return 0;
	}
	for (size_t i = 0; i < x->n_argv; i++) {
		if (!x->argv[i]) {
			*what = "missing argument";
			return 0;
		}
		argv_bytes += strnlen(x->argv[i], FRAME_MAX_ARGV_BYTES + 1) + 1;
		if (argv_bytes > FRAME_MAX_ARGV_BYTES) {
			*what = "argv too long";
			return 0;
		}
	}
	return 1;
}

static uint64_t larger(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* The latest boot-clock time an event names: its own and its process's start. */
static uint64_t event_clock(const Tracer__Event *ev)
{
	switch (ev->kind_case) {
	case TRACER__EVENT__KIND_FORK:
		return larger(ev->ts_ns, larger(ev->fork->start_ns, ev->fork->parent_start_ns));
	case TRACER__EVENT__KIND_EXEC:
		return larger(ev->ts_ns, larger(ev->exec->start_ns, ev->exec->parent_start_ns));
	case TRACER__EVENT__KIND_EXIT:
		return larger(ev->ts_ns, ev->exit->start_ns);
	case TRACER__EVENT__KIND_EXIT_TAIL:
		return larger(ev->ts_ns, ev->exit_tail->start_ns);
	case TRACER__EVENT__KIND_CWD:
		return larger(ev->ts_ns, ev->cwd->start_ns);
	case TRACER__EVENT__KIND_OOM:
		return larger(ev->ts_ns, ev->oom->start_ns);
	case TRACER__EVENT__KIND_FILE:
		return larger(ev->ts_ns, ev->file->start_ns);
	case TRACER__EVENT__KIND_FILE_COUNTS:
		return larger(ev->ts_ns, ev->file_counts->start_ns);
	case TRACER__EVENT__KIND_SAMPLE:
		return larger(ev->ts_ns, ev->sample->start_ns);
	default:
		return ev->ts_ns;
	}
}

/* What is wrong with an event of a kind other than exec, or NULL. */
static const char *event_fault(const Tracer__Event *ev)
{
	switch (ev->kind_case) {
	case TRACER__EVENT__KIND_FORK:
		if (ev->fork->pid == 0)
			return "fork without pid";
		if (!string_ok(ev->fork->comm, FRAME_MAX_COMM))
			return "fork comm too long";
		return NULL;
	case TRACER__EVENT__KIND_EXIT:
		if (ev->exit->pid == 0 || ev->exit->start_ns == 0)
			return "exit without pid or start time";
		if (!string_ok(ev->exit->comm, FRAME_MAX_COMM) ||
		    !string_ok(ev->exit->killer_comm, FRAME_MAX_COMM))
			return "exit comm or killer comm too long";
		return NULL;
	case TRACER__EVENT__KIND_OOM:
		if (ev->oom->pid == 0 || !string_ok(ev->oom->comm, FRAME_MAX_COMM))
			return "oom event without pid, or comm too long";
		return NULL;
	case TRACER__EVENT__KIND_FILE:
		if (ev->file->pid == 0 || !ev->file->path || !ev->file->path[0] ||
		    !string_ok(ev->file->path, FRAME_MAX_PATH) || ev->file->slot >= FRAME_MAX_FILES)
			return "file event without pid or path, path too long, or slot out of "
			       "range";
		return NULL;
	case TRACER__EVENT__KIND_FILE_COUNTS:
		if (ev->file_counts->pid == 0 || ev->file_counts->n_count > FRAME_MAX_FILES ||
		    ev->file_counts->n_failed > FRAME_MAX_FILES ||
		    ev->file_counts->n_flags_union > FRAME_MAX_FILES)
			return "file counts without pid or with too many files";
		return NULL;
	case TRACER__EVENT__KIND_CGROUP:
		if (!string_ok(ev->cgroup->path, FRAME_MAX_PATH) ||
		    !string_ok(ev->cgroup->controllers, FRAME_MAX_COMM))
			return "cgroup path or controllers too long";
		return NULL;
	case TRACER__EVENT__KIND_CWD:
		if (ev->cwd->pid == 0 || ev->cwd->start_ns == 0 ||
		    !string_ok(ev->cwd->cwd, FRAME_MAX_PATH))
			return "cwd event without pid or start time, or path too long";
		return NULL;
	case TRACER__EVENT__KIND_EXIT_TAIL:
		if (ev->exit_tail->pid == 0 || ev->exit_tail->start_ns == 0)
			return "exit tail without pid or start time";
		return NULL;
	case TRACER__EVENT__KIND_SAMPLE:
		if (ev->sample->pid == 0 || ev->sample->start_ns == 0)
			return "sample without pid or start time";
		return NULL;
	case TRACER__EVENT__KIND_ENERGY:
		if (ev->energy->zone >= FRAME_MAX_ENERGY_ZONES ||
		    !string_ok(ev->energy->name, FRAME_MAX_ENERGY_NAME))
			return "energy counter of a zone out of range, or name too long";
		return NULL;
	default:
		return "event of unknown kind";
	}
}

static int event_ok(const Tracer__Event *ev, const char **what)
{
	if (event_clock(ev) >= FRAME_MAX_CLOCK_NS) {
		*what = "a time past 2^62 ns of uptime";
		return 0;
	}
	if (ev->kind_case == TRACER__EVENT__KIND_EXEC)
		return exec_ok(ev->exec, what);
	*what = event_fault(ev);
	return *what == NULL;
}

enum frame_error frame_decode(struct frame_arena *arena, const uint8_t *buf, size_t len,
			      Tracer__Frame **out, char *why, size_t why_size)
{
	Tracer__Frame *f;
	const char *what = NULL;

	*out = NULL;
	if (len > FRAME_MAX_BYTES)
		return fail(FRAME_TOO_BIG, why, why_size, "%zu bytes, limit %u", len,
			    FRAME_MAX_BYTES);
	f = tracer__frame__unpack(&arena->allocator, len, buf);
	if (!f) {
		frame_arena_reset(arena);
		return fail(FRAME_UNDECODABLE, why, why_size, "protobuf unpack failed (%zu bytes)",
			    len);
	}
	if (f->version != TRACER__CONSTANTS__FRAME_VERSION) {
		unsigned v = f->version;
		frame_arena_reset(arena);
		return fail(FRAME_BAD_VERSION, why, why_size, "version %u, expected %d", v,
			    TRACER__CONSTANTS__FRAME_VERSION);
	}
	if (f->stream_id.len != FRAME_ID_LEN || f->boot_id.len != FRAME_ID_LEN || f->seq == 0 ||
	    !string_ok(f->host_id, 64) || !string_ok(f->hostname, 256) ||
	    f->n_events > FRAME_MAX_EVENTS || (f->has_oldest_seq && f->oldest_seq > f->seq)) {
		frame_arena_reset(arena);
		return fail(FRAME_BAD_HEADER, why, why_size,
			    "bad stream id, boot id, seq, oldest seq, host id or event count");
	}
	if (f->watermark_ns >= FRAME_MAX_CLOCK_NS ||
	    f->realtime_offset_ns >= (int64_t)FRAME_MAX_CLOCK_NS ||
	    f->realtime_offset_ns <= -(int64_t)FRAME_MAX_CLOCK_NS) {
		frame_arena_reset(arena);
		return fail(FRAME_BAD_HEADER, why, why_size,
			    "watermark or wall-clock offset out of range");
	}
	for (size_t i = 0; i < f->n_events; i++) {
		if (!event_ok(f->events[i], &what)) {
			frame_arena_reset(arena);
			return fail(FRAME_BAD_EVENT, why, why_size, "event %zu: %s", i, what);
		}
	}
	*out = f;
	return FRAME_OK;
}
