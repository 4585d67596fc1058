#include "collector/convert/convert.h"
#include "collector/convert/internal.h"

#include <string.h>

#include "collector/redact/rules_file.h"

#define MAX_ARGS (TRACER_ARGV_MAX / 2 + 1)
#define FRAME_EVENTS_FIELD 10 /* Frame.events */
#define TS_FIELD 1	      /* Event.ts_ns */

/*
 * The Event wrapper (ts_ns, then the one message of its oneof) is written
 * here and only the inner message goes through protobuf-c: packing a nested
 * message sizes it first, so tracer__event__pack after
 * tracer__event__get_packed_size sized each event's tree once more than
 * needed (about a tenth of the collector's CPU in an exec storm). The bytes
 * are the ones protobuf-c would write (test_convert_pack checks it).
 */
int append_event(struct bytebuf *out, const Tracer__Event *ev)
{
	const ProtobufCFieldDescriptor *field =
	    protobuf_c_message_descriptor_get_field(&tracer__event__descriptor, ev->kind_case);
	const ProtobufCMessage *inner =
	    field ? *(const ProtobufCMessage *const *)((const char *)ev + field->offset) : NULL;

	if (!inner || field->type != PROTOBUF_C_TYPE_MESSAGE || field->id >= 16)
		return -1; /* every kind is a message with a one-byte tag (tracer.proto) */
	size_t inner_size = protobuf_c_message_get_packed_size(inner);
	size_t event_size = 1 + varint_size(ev->ts_ns) + 1 + varint_size(inner_size) + inner_size;
	size_t head = 1 + varint_size(event_size);
	uint8_t *p = bytebuf_reserve(out, head + event_size);

	if (!p)
		return -1;
	p = varint_put(p, (FRAME_EVENTS_FIELD << 3) | 2);
	p = varint_put(p, event_size);
	p = varint_put(p, (TS_FIELD << 3) | 0);
	p = varint_put(p, ev->ts_ns);
	p = varint_put(p, (field->id << 3) | 2);
	p = varint_put(p, inner_size);
	if (protobuf_c_message_pack(inner, p) != inner_size)
		return -1; /* cannot happen; never append a frame entry of the wrong length */
	out->len += head + event_size;
	return 0;
}

unsigned split_argv(char *blob, size_t len, char **argv, unsigned max_args)
{
	unsigned n = 0;
	size_t start = 0;

	for (size_t i = 0; i < len && n < max_args; i++) {
		if (blob[i] != '\0')
			continue;
		argv[n++] = blob + start;
		start = i + 1;
	}
	return n;
}

void join_path_components(const char *comps, size_t len, int truncated, char *out, size_t size)
{
	size_t ends[TRACER_CWD_DEPTH * 2];
	unsigned n = 0;
	size_t o = 0;

	if (size == 0)
		return;
	for (size_t i = 0; i < len && n < sizeof(ends) / sizeof(ends[0]); i++)
		if (comps[i] == '\0')
			ends[n++] = i;
	if (truncated && o + 3 < size) {
		memcpy(out, "...", 3);
		o = 3;
	}
	for (unsigned k = n; k-- > 0;) {
		size_t start = k ? ends[k - 1] + 1 : 0;
		size_t clen = ends[k] - start;
		if (o + 1 + clen >= size)
			break;
		out[o++] = '/';
		memcpy(out + o, comps + start, clen);
		o += clen;
	}
	if (o == 0 && size > 1)
		out[o++] = '/';
	out[o] = '\0';
}

static struct convert_groups active = {true, true, true, true};

/* Sets an optional protobuf-c field and the flag that says it is present. */
#define SET_FIELD(msg, field, value)                                                               \
	do {                                                                                       \
		(msg)->has_##field = 1;                                                            \
		(msg)->field = (value);                                                            \
	} while (0)
#define SET_NONZERO(msg, field, value)                                                             \
	do {                                                                                       \
		if ((value) != 0)                                                                  \
			SET_FIELD(msg, field, value);                                              \
	} while (0)

void convert_set_groups(struct convert_groups g)
{
	active = g;
}

/* Network wait: the total always (its presence says it was measured), the rest if non-zero. */
static void set_net_wait(Tracer__Counters *out, const struct tracer_counters *in)
{
	const __u64 *w = in->net_wait_ns;

	SET_FIELD(out, net_wait_ns,
		  w[TRACER_NET_WAIT_RECV] + w[TRACER_NET_WAIT_SEND] + w[TRACER_NET_WAIT_CONNECT] +
		      w[TRACER_NET_WAIT_ACCEPT] + w[TRACER_NET_WAIT_POLL]);
	SET_NONZERO(out, net_wait_recv_ns, w[TRACER_NET_WAIT_RECV]);
	SET_NONZERO(out, net_wait_send_ns, w[TRACER_NET_WAIT_SEND]);
	SET_NONZERO(out, net_wait_connect_ns, w[TRACER_NET_WAIT_CONNECT]);
	SET_NONZERO(out, net_wait_accept_ns, w[TRACER_NET_WAIT_ACCEPT]);
	SET_NONZERO(out, net_wait_poll_ns, w[TRACER_NET_WAIT_POLL]);
	SET_NONZERO(out, net_wait_max_ns, in->net_wait_max_ns);
	SET_NONZERO(out, net_wait_peer_family, in->net_wait_max_peer >> 16);
	SET_NONZERO(out, net_wait_peer_port, in->net_wait_max_peer & 0xffff);
}

void counters_from_kernel(const struct tracer_counters *in, Tracer__Counters *out,
			  int peak_from_signal)
{
	tracer__counters__init(out);
	/*
	 * A field left out reads as 0. Only the first field of each optional
	 * probe group is always sent, as the sign the group was on; a zero
	 * elsewhere is left out (most of a short process's counters), which the
	 * collector need not pack nor the aggregator decode.
	 */
	SET_NONZERO(out, utime_ns, in->utime_ns);
	SET_NONZERO(out, stime_ns, in->stime_ns);
	SET_NONZERO(out, runtime_ns, in->runtime_ns);
	SET_NONZERO(out, vol_ctxsw, in->vol_ctxsw);
	SET_NONZERO(out, invol_ctxsw, in->invol_ctxsw);
	SET_NONZERO(out, min_faults, in->min_faults);
	SET_NONZERO(out, maj_faults, in->maj_faults);
	SET_NONZERO(out, rchar, in->rchar);
	SET_NONZERO(out, wchar, in->wchar);
	SET_NONZERO(out, syscr, in->syscr);
	SET_NONZERO(out, syscw, in->syscw);
	SET_NONZERO(out, read_bytes, in->read_bytes);
	SET_NONZERO(out, write_bytes, in->write_bytes);
	SET_NONZERO(out, cancelled_write_bytes, in->cancelled_write_bytes);
	SET_NONZERO(out, peak_rss_kb, in->peak_rss_kb);
	SET_NONZERO(out, signal_maxrss_kb, in->signal_maxrss_kb);
	SET_NONZERO(out, peak_from_signal, peak_from_signal != 0);
	SET_NONZERO(out, runq_ns, in->runq_ns); /* kept by the kernel: no probe needed */
	if (active.scheduler) {
		SET_FIELD(out, iowait_ns, in->iowait_ns);
		set_net_wait(out, in);
	}
	if (active.reclaim)
		SET_FIELD(out, reclaim_ns, in->reclaim_ns);
	if (active.network) {
		SET_FIELD(out, net_tx_bytes, in->net_tx_bytes);
		SET_NONZERO(out, net_rx_bytes, in->net_rx_bytes);
	}
	if (active.syscalls) {
		SET_FIELD(out, sys_file, in->sys[TRACER_SYS_FILE]);
		SET_NONZERO(out, sys_net, in->sys[TRACER_SYS_NET]);
		SET_NONZERO(out, sys_mem, in->sys[TRACER_SYS_MEM]);
		SET_NONZERO(out, sys_proc, in->sys[TRACER_SYS_PROC]);
		SET_NONZERO(out, sys_other, in->sys[TRACER_SYS_OTHER]);
		SET_NONZERO(out, sys_failed, in->sys_failed);
	}
}

static void copy_comm(char out[TRACER_COMM_LEN + 1], const char *comm)
{
	memcpy(out, comm, TRACER_COMM_LEN);
	out[TRACER_COMM_LEN] = '\0';
}

static int convert_fork(const void *record, struct bytebuf *out, struct convert_stats *st)
{
	const struct tracer_fork_event *k = record;

	(void)st;
	Tracer__Event ev = TRACER__EVENT__INIT;
	Tracer__ForkEvent f = TRACER__FORK_EVENT__INIT;
	char comm[TRACER_COMM_LEN + 1];

	copy_comm(comm, k->comm);
	f.pid = k->h.pid;
	f.has_start_ns = 1;
	f.start_ns = k->h.start_ns;
	f.parent_pid = k->parent_pid;
	f.parent_start_ns = k->parent_start_ns;
	f.has_uid = f.has_gid = 1;
	f.uid = k->uid;
	f.gid = k->gid;
	f.comm = comm;
	f.has_cgroup_id = f.has_cgroup1_id = 1;
	f.cgroup_id = k->cgroup_id;
	f.cgroup1_id = k->cgroup1_id;
	ev.ts_ns = k->h.ts_ns;
	ev.kind_case = TRACER__EVENT__KIND_FORK;
	ev.fork = &f;
	return append_event(out, &ev);
}

static int convert_exec(const void *record, struct bytebuf *out, struct convert_stats *st)
{
	const struct tracer_exec_event *k = record;
	Tracer__Event ev = TRACER__EVENT__INIT;
	Tracer__ExecEvent x = TRACER__EXEC_EVENT__INIT;
	Tracer__Counters at_exec;
	static char argv_blob[TRACER_ARGV_MAX + 1];
	static char redacted[TRACER_ARGV_MAX * 4 + 64];
	static char exe[sizeof(k->filename) + 8], cwd[sizeof(k->cwd) + 8];
	char *argv[MAX_ARGS], *safe_argv[MAX_ARGS];
	char comm[TRACER_COMM_LEN + 1];
	size_t argv_len = k->argv_len < TRACER_ARGV_MAX ? k->argv_len : TRACER_ARGV_MAX;
	unsigned argc;

	/* A truncated blob ends mid-argument: split_argv drops that partial one. */
	memcpy(argv_blob, k->argv, argv_len);
	argv_blob[argv_len] = '\0';
	/* A running process may have rewritten its argv without its last NUL
	 * (setproctitle): the whole area, not past it, is its last argument. */
	bool snapshot = (k->h.flags & TRACER_F_FROM_SNAPSHOT) != 0;
	bool whole = !(k->h.flags & TRACER_F_ARGV_TRUNCATED);
	argc = split_argv(argv_blob,
			  argv_len + (snapshot && whole && argv_len && argv_blob[argv_len - 1]),
			  argv, MAX_ARGS);
	unsigned redactions =
	    redact_argv(redact_rules_active(), argv, argc, redacted, sizeof(redacted), safe_argv);
	st->redactions += redactions;

	join_path_components(k->filename,
			     k->filename_len < sizeof(k->filename) ? k->filename_len
								   : sizeof(k->filename),
			     (k->h.flags & TRACER_F_FILENAME_TRUNCATED) != 0, exe, sizeof(exe));
	join_path_components(k->cwd, k->cwd_len < sizeof(k->cwd) ? k->cwd_len : sizeof(k->cwd),
			     (k->h.flags & TRACER_F_CWD_TRUNCATED) != 0, cwd, sizeof(cwd));
	copy_comm(comm, k->comm);
	counters_from_kernel(&k->at_exec, &at_exec, (k->h.flags & TRACER_F_PEAK_FROM_SIGNAL) != 0);

	x.pid = k->h.pid;
	x.start_ns = k->h.start_ns;
	x.has_ppid = x.has_parent_start_ns = x.has_uid = x.has_gid = 1;
	x.ppid = k->ppid;
	x.parent_start_ns = k->parent_start_ns;
	x.uid = k->uid;
	x.gid = k->gid;
	x.comm = comm;
	x.exe = k->filename_len ? exe : NULL;
	x.n_argv = argc;
	x.argv = safe_argv;
	x.has_argv_truncated = 1;
	x.argv_truncated = (k->h.flags & TRACER_F_ARGV_TRUNCATED) != 0;
	x.cwd = (k->h.flags & TRACER_F_CWD_ERROR) ? NULL : cwd;
	x.has_cwd_truncated = 1;
	x.cwd_truncated = (k->h.flags & TRACER_F_CWD_TRUNCATED) != 0;
	x.has_cgroup_id = x.has_cgroup1_id = 1;
	x.cgroup_id = k->cgroup_id;
	x.cgroup1_id = k->cgroup1_id;
	/* Already running at start-up: what it used before is not its exec's. */
	x.at_exec = snapshot ? NULL : &at_exec;
	x.has_from_snapshot = snapshot;
	x.from_snapshot = snapshot;
	if (k->h.flags & TRACER_F_PREV_PEAK_KNOWN) {
		x.has_prev_peak_rss_kb = 1;
		x.prev_peak_rss_kb = k->prev_peak_rss_kb;
	}
	x.has_argv_redactions = redactions != 0;
	x.argv_redactions = redactions;
	ev.ts_ns = k->h.ts_ns;
	ev.kind_case = TRACER__EVENT__KIND_EXEC;
	ev.exec = &x;
	return append_event(out, &ev);
}

static int convert_exit(const void *record, struct bytebuf *out, struct convert_stats *st)
{
	const struct tracer_exit_event *k = record;

	(void)st;
	Tracer__Event ev = TRACER__EVENT__INIT;
	Tracer__ExitEvent x = TRACER__EXIT_EVENT__INIT;
	Tracer__Counters totals;
	char comm[TRACER_COMM_LEN + 1];

	copy_comm(comm, k->comm);
	counters_from_kernel(&k->totals, &totals, (k->h.flags & TRACER_F_PEAK_FROM_SIGNAL) != 0);
	x.pid = k->h.pid;
	x.start_ns = k->h.start_ns;
	x.wait_status = k->exit_code;
	x.has_ppid = 1;
	x.ppid = k->ppid;
	x.totals = &totals;
	x.comm = comm;
	x.has_walk_seq = 1;
	x.walk_seq = k->walk_seq;
	char killer[TRACER_COMM_LEN + 1];
	if (k->killer_pid) {
		copy_comm(killer, k->killer_comm);
		x.has_killer_pid = 1;
		x.killer_pid = k->killer_pid;
		x.killer_comm = killer;
	}
	ev.ts_ns = k->h.ts_ns;
	ev.kind_case = TRACER__EVENT__KIND_EXIT;
	ev.exit = &x;
	return append_event(out, &ev);
}

static int convert_oom(const void *record, struct bytebuf *out, struct convert_stats *st)
{
	const struct tracer_oom_event *k = record;

	(void)st;
	Tracer__Event ev = TRACER__EVENT__INIT;
	Tracer__OomEvent x = TRACER__OOM_EVENT__INIT;
	char comm[TRACER_COMM_LEN + 1];

	copy_comm(comm, k->comm);
	x.pid = k->h.pid;
	x.start_ns = k->h.start_ns;
	x.comm = comm;
	x.has_total_vm_kb = x.has_anon_rss_kb = x.has_file_rss_kb = x.has_shmem_rss_kb = 1;
	x.total_vm_kb = k->total_vm_kb;
	x.anon_rss_kb = k->anon_rss_kb;
	x.file_rss_kb = k->file_rss_kb;
	x.shmem_rss_kb = k->shmem_rss_kb;
	x.has_cgroup_id = x.has_cgroup1_id = x.has_memcg_limit_kb = x.has_memcg_usage_kb = 1;
	x.cgroup_id = k->cgroup_id;
	x.cgroup1_id = k->cgroup1_id;
	x.memcg_limit_kb = k->memcg_limit_kb;
	x.memcg_usage_kb = k->memcg_usage_kb;
	x.has_oom_score_adj = x.has_uid = 1;
	x.oom_score_adj = k->oom_score_adj;
	x.uid = k->uid;
	ev.ts_ns = k->h.ts_ns;
	ev.kind_case = TRACER__EVENT__KIND_OOM;
	ev.oom = &x;
	return append_event(out, &ev);
}

static int convert_file(const void *record, struct bytebuf *out, struct convert_stats *st)
{
	const struct tracer_file_event *k = record;

	(void)st;
	Tracer__Event ev = TRACER__EVENT__INIT;
	Tracer__FileEvent x = TRACER__FILE_EVENT__INIT;
	char path[TRACER_PATH_MAX + 1];
	size_t n = k->path_len < TRACER_PATH_MAX ? k->path_len : TRACER_PATH_MAX;

	memcpy(path, k->path, n);
	path[n] = '\0';
	x.pid = k->h.pid;
	x.start_ns = k->h.start_ns;
	x.path = path;
	x.has_open_flags = x.has_result = x.has_slot = 1;
	x.open_flags = k->open_flags;
	x.result = k->result;
	x.slot = k->slot;
	x.has_relative = x.has_dirfd_relative = x.has_truncated = 1;
	x.relative = (k->file_flags & TRACER_FILE_RELATIVE) != 0;
	x.dirfd_relative = (k->file_flags & TRACER_FILE_DIRFD) != 0;
	x.truncated = (k->file_flags & TRACER_FILE_TRUNCATED) != 0;
	ev.ts_ns = k->h.ts_ns;
	ev.kind_case = TRACER__EVENT__KIND_FILE;
	ev.file = &x;
	return append_event(out, &ev);
}

static int convert_file_counts(const void *record, struct bytebuf *out, struct convert_stats *st)
{
	const struct tracer_file_counts_event *k = record;

	(void)st;
	Tracer__Event ev = TRACER__EVENT__INIT;
	Tracer__FileCountsEvent x = TRACER__FILE_COUNTS_EVENT__INIT;
	size_t n = k->n < TRACER_FILES_PER_PROC ? k->n : TRACER_FILES_PER_PROC;

	x.pid = k->h.pid;
	x.start_ns = k->h.start_ns;
	x.n_count = x.n_failed = x.n_flags_union = n;
	x.count = (uint32_t *)k->count;
	x.failed = (uint32_t *)k->failed;
	x.flags_union = (uint32_t *)k->flags_union;
	x.has_overflow = 1;
	x.overflow = k->overflow;
	ev.ts_ns = k->h.ts_ns;
	ev.kind_case = TRACER__EVENT__KIND_FILE_COUNTS;
	ev.file_counts = &x;
	return append_event(out, &ev);
}

static int convert_cgroup(const void *record, struct bytebuf *out, struct convert_stats *st)
{
	const struct tracer_cgroup_event *k = record;

	(void)st;
	Tracer__Event ev = TRACER__EVENT__INIT;
	Tracer__CgroupEvent x = TRACER__CGROUP_EVENT__INIT;
	char path[TRACER_PATH_MAX + 1];
	size_t n = k->path_len < TRACER_PATH_MAX ? k->path_len : TRACER_PATH_MAX;

	memcpy(path, k->path, n);
	path[n] = '\0';
	x.id = k->id;
	x.has_hierarchy = x.has_level = x.has_removed = 1;
	x.hierarchy = k->hierarchy;
	x.level = k->level;
	x.removed = k->op == TRACER_CGROUP_RMDIR;
	x.path = path;
	ev.ts_ns = k->h.ts_ns;
	ev.kind_case = TRACER__EVENT__KIND_CGROUP;
	ev.cgroup = &x;
	return append_event(out, &ev);
}

static int convert_exit_tail(const void *record, struct bytebuf *out, struct convert_stats *st)
{
	const struct tracer_exit_tail_event *k = record;

	(void)st;
	Tracer__Event ev = TRACER__EVENT__INIT;
	Tracer__ExitTailEvent x = TRACER__EXIT_TAIL_EVENT__INIT;

	x.pid = k->h.pid;
	x.start_ns = k->h.start_ns;
	x.has_runtime_ns = x.has_utime_ns = x.has_stime_ns = 1;
	x.runtime_ns = k->runtime_ns;
	x.utime_ns = k->utime_ns;
	x.stime_ns = k->stime_ns;
	x.has_walk_seq = 1;
	x.walk_seq = k->walk_seq;
	ev.ts_ns = k->h.ts_ns;
	ev.kind_case = TRACER__EVENT__KIND_EXIT_TAIL;
	ev.exit_tail = &x;
	return append_event(out, &ev);
}

static int convert_cwd(const void *record, struct bytebuf *out, struct convert_stats *st)
{
	const struct tracer_cwd_event *k = record;

	(void)st;
	Tracer__Event ev = TRACER__EVENT__INIT;
	Tracer__CwdEvent x = TRACER__CWD_EVENT__INIT;
	static char cwd[sizeof(k->cwd) + 8];

	join_path_components(k->cwd, k->cwd_len < sizeof(k->cwd) ? k->cwd_len : sizeof(k->cwd),
			     (k->h.flags & TRACER_F_CWD_TRUNCATED) != 0, cwd, sizeof(cwd));
	x.pid = k->h.pid;
	x.start_ns = k->h.start_ns;
	x.cwd = cwd;
	x.has_truncated = 1;
	x.truncated = (k->h.flags & TRACER_F_CWD_TRUNCATED) != 0;
	ev.ts_ns = k->h.ts_ns;
	ev.kind_case = TRACER__EVENT__KIND_CWD;
	ev.cwd = &x;
	return append_event(out, &ev);
}

int convert_sample(const struct tracer_sample *k, struct bytebuf *out)
{
	Tracer__Event ev = TRACER__EVENT__INIT;
	Tracer__SampleEvent x = TRACER__SAMPLE_EVENT__INIT;

	x.pid = k->pid;
	x.start_ns = k->start_ns;
	SET_FIELD(&x, utime_ns, k->utime_ns);
	SET_FIELD(&x, stime_ns, k->stime_ns);
	SET_FIELD(&x, runtime_ns, k->runtime_ns);
	SET_FIELD(&x, rss_kb, k->rss_kb);
	SET_FIELD(&x, rchar, k->rchar);
	SET_FIELD(&x, wchar, k->wchar);
	SET_FIELD(&x, read_bytes, k->read_bytes);
	SET_FIELD(&x, write_bytes, k->write_bytes);
	SET_FIELD(&x, runq_ns, k->runq_ns);
	if (active.scheduler)
		SET_FIELD(&x, iowait_ns, k->iowait_ns);
	if (active.network) {
		SET_FIELD(&x, net_tx_bytes, k->net_tx_bytes);
		SET_FIELD(&x, net_rx_bytes, k->net_rx_bytes);
	}
	SET_FIELD(&x, vol_ctxsw, k->vol_ctxsw);
	SET_FIELD(&x, invol_ctxsw, k->invol_ctxsw);
	SET_FIELD(&x, state, k->state);
	SET_FIELD(&x, threads, k->nthreads);
	ev.ts_ns = k->ts_ns;
	ev.kind_case = TRACER__EVENT__KIND_SAMPLE;
	ev.sample = &x;
	return append_event(out, &ev);
}

/* Each ring-buffer record type: its least size and its converter. */
static const struct converter {
	size_t size;
	int (*convert)(const void *record, struct bytebuf *out, struct convert_stats *st);
} converters[TRACER_EV_COUNT] = {
    [TRACER_EV_FORK] = {sizeof(struct tracer_fork_event), convert_fork},
    [TRACER_EV_EXEC] = {sizeof(struct tracer_exec_event), convert_exec},
    [TRACER_EV_EXIT] = {sizeof(struct tracer_exit_event), convert_exit},
    [TRACER_EV_OOM] = {sizeof(struct tracer_oom_event), convert_oom},
    [TRACER_EV_FILE] = {sizeof(struct tracer_file_event), convert_file},
    [TRACER_EV_FILE_COUNTS] = {sizeof(struct tracer_file_counts_event), convert_file_counts},
    [TRACER_EV_CGROUP] = {sizeof(struct tracer_cgroup_event), convert_cgroup},
    [TRACER_EV_EXIT_TAIL] = {sizeof(struct tracer_exit_tail_event), convert_exit_tail},
    [TRACER_EV_CWD] = {sizeof(struct tracer_cwd_event), convert_cwd},
};

int convert_record(const void *data, size_t size, struct bytebuf *out, struct convert_stats *st,
		   int *type)
{
	const struct tracer_event_header *h = data;
	const struct converter *c = NULL;

	st->records++;
	*type = 0;
	if (size >= sizeof(*h)) {
		*type = (int)h->type;
		if (h->type < TRACER_EV_COUNT && converters[h->type].convert)
			c = &converters[h->type];
	}
	if (!c || size < c->size) {
		st->bad_records++;
		return 1;
	}
	return c->convert(data, out, st);
}
