#include "collector/setup/probes.h"
#include "collector/setup/internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "collector/setup/syscall_table.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "tracer.skel.h"

const char *probe_state_name(enum probe_state s)
{
	return s == PROBE_ACTIVE ? "active" : s == PROBE_MISSING ? "missing" : "disabled";
}

/* A failed load's verifier log runs to thousands of lines, the reason last. */
#define LIBBPF_LOG_TAIL 6000

/* libbpf's messages into our log, a line at a time; of a long one, its end. BPF
 * memory is memcg-accounted on 5.11+: the memlock limit's warning does not apply. */
static int libbpf_to_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *msg = NULL, *line, *end;
	int len = level == LIBBPF_DEBUG && log_get_level() < LOG_LVL_DEBUG
		      ? -1
		      : vasprintf(&msg, fmt, ap);

	if (len < 0)
		return 0;
	enum log_level ours =
	    level == LIBBPF_WARN && !strstr(msg, "RLIMIT_MEMLOCK") ? LOG_LVL_WARN : LOG_LVL_DEBUG;
	line = len > LIBBPF_LOG_TAIL ? strchr(msg + len - LIBBPF_LOG_TAIL, '\n') : msg;
	if (line != msg) {
		line = line ? line + 1 : msg + len;
		log_msg(ours, "libbpf: (%td bytes of its log left out)", line - msg);
	}
	for (; *line; line = end ? end + 1 : line + strlen(line)) {
		end = strchr(line, '\n');
		log_msg(ours, "libbpf: %.*s", end ? (int)(end - line) : (int)strlen(line), line);
	}
	free(msg);
	return 0;
}

/* The host's PID namespace (PROC_PID_INIT_INO in the kernel). */
#define HOST_PID_NAMESPACE 0xEFFFFFFCu

/*
 * Our PID namespace when it is not the host's (a container with its own):
 * the kernel's programs then number processes as it does, as our /proc and
 * the `tracer run` that started us see them. 0 on the host.
 */
static uint32_t container_pid_namespace(void)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) != 0 || st.st_ino == HOST_PID_NAMESPACE)
		return 0;
	log_info("inside a PID namespace of its own (%lu): processes are numbered as it numbers "
		 "them, and those outside it are not recorded",
		 (unsigned long)st.st_ino);
	return (uint32_t)st.st_ino;
}

static void all_programs_off(struct tracer_bpf *s)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, s->obj) bpf_program__set_autoload(prog, false);
}

static int fill_tables(struct tracer_bpf *skel, const struct collector_config *cfg)
{
	int fd = bpf_map__fd(skel->maps.syscall_class);

	for (unsigned i = 0; i < syscall_table_size; i++) {
		uint32_t nr = syscall_table[i].nr;
		uint8_t cls = syscall_table[i].cls;
		if (nr < TRACER_SYSCALL_MAX && bpf_map_update_elem(fd, &nr, &cls, BPF_ANY) != 0)
			return -1;
	}
	return 0;
}

/*
 * One attempt at loading with the given groups. The process group is always
 * in; a group whose programs fail to load is found by adding groups one at
 * a time (try_load is then called per group).
 */
static int try_load(struct probes *p, const struct collector_config *cfg, const bool *want,
		    bool quiet)
{
	struct tracer_bpf *skel = tracer_bpf__open();
	char why[160];
	int err;

	if (!skel) {
		log_error("cannot open BPF object: %s", strerror(errno));
		return -1;
	}
	skel->rodata->page_kb = (uint32_t)(sysconf(_SC_PAGESIZE) / 1024);
	skel->rodata->wakeup_bytes = (uint64_t)cfg->ring_mb << 20 >> 2;
	skel->rodata->use_perfbuf = p->using_perfbuf;
	skel->rodata->net_via_syscalls = p->net_via_syscalls;
	skel->rodata->n_exclude = cfg->n_file_exclude;
	memcpy((void *)skel->rodata->file_exclude, cfg->file_exclude, sizeof(cfg->file_exclude));
	skel->rodata->skip_kinds = file_skip_kinds(cfg);
	int n_cpus = libbpf_num_possible_cpus();
	uint32_t cpus = n_cpus > 0 ? (uint32_t)n_cpus : 1;
	skel->rodata->nr_cpus = cpus;
	/* Per-CPU LRU maps are preallocated: keep them near 64 MiB on big hosts. */
	uint32_t entries = (64u << 20) / (cpus * bpf_map__value_size(skel->maps.proc_accs));
	bpf_map__set_max_entries(skel->maps.proc_accs,
				 entries < 65536 ? (entries > 4096 ? entries : 4096) : 65536);
	skel->rodata->exclude_shared_libs = cfg->exclude_shared_libs;
	/* The exit path's CPU is sent from the scheduler's sched_switch program. */
	skel->rodata->exit_tails_on = want[PROBE_SCHEDULER];
	skel->rodata->pidns_inum =
	    cfg->scope_pidns.inode ? cfg->scope_pidns.inode : container_pid_namespace();
	if (p->using_perfbuf) {
		/* The ring buffer stays unused: as small as allowed, or not created. */
		if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1)
			bpf_map__set_max_entries(skel->maps.events,
						 (uint32_t)sysconf(_SC_PAGESIZE));
		else
			bpf_map__set_autocreate(skel->maps.events, false);
	} else {
		bpf_map__set_max_entries(skel->maps.events, cfg->ring_mb << 20);
	}
	all_programs_off(skel);
	bpf_program__set_autoload(skel->progs.snapshot_tasks, p->snapshot_iter);
	for (int grp = 0; grp < PROBE_GROUPS; grp++) {
		struct group_progs g;
		if (!want[grp])
			continue;
		group_programs(p, skel, grp, &g, why, sizeof(why));
		for (unsigned i = 0; i < g.n; i++)
			bpf_program__set_autoload(g.progs[i], true);
	}
	/* Set by the network group's choice just above. */
	skel->rodata->tcp_by_consumption = want[PROBE_NETWORK] && p->tcp_by_consumption;
	if (p->pinning)
		pins_name_maps(p, skel);
	if (quiet)
		libbpf_set_print(NULL);
	err = tracer_bpf__load(skel);
	libbpf_set_print(libbpf_to_log);
	if (!err)
		err = fill_tables(skel, cfg);
	if (err) {
		tracer_bpf__destroy(skel);
		return -1;
	}
	if (p->skel)
		tracer_bpf__destroy(p->skel);
	p->skel = skel;
	return 0;
}

/* What this kernel offers: ring buffer or perf buffer, tp_btf, the kfunc, prepare_exec. */
static void probe_kernel_features(struct probes *p, const struct collector_config *cfg)
{
	p->using_perfbuf =
	    cfg->force_perfbuf || libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) != 1;
	if (p->using_perfbuf && !cfg->force_perfbuf)
		log_warn("no BPF ring buffer in this kernel: using per-CPU perf buffers");
	p->using_tp_btf = !cfg->force_tracepoints && has_btf_tracepoint("sched_process_exec") &&
			  has_btf_tracepoint("sched_process_exit") &&
			  has_btf_tracepoint("sched_process_fork");
	/* Linux 5.5-6.1 have tp_btf but not the kfunc exec_btf's path walk needs. */
	p->rdonly_cast = !cfg->force_no_kfunc && has_kernel_function("bpf_rdonly_cast");
	p->exec_btf = p->using_tp_btf && p->rdonly_cast;
	if (!p->rdonly_cast)
		log_info("%s: exec on its classic tracepoint, every open reads its path",
			 cfg->force_no_kfunc ? "--force-no-kfunc"
					     : "no bpf_rdonly_cast kfunc (Linux 6.2+)");
	if (!p->exec_btf)
		ensure_tracefs();
	p->prepare_exec = has_btf_tracepoint("sched_prepare_exec");
}

/* Which groups are wanted and offered by this kernel: want[], and each one's status. */
static int choose_groups(struct probes *p, const struct collector_config *cfg, bool *want)
{
	char why[160];

	for (int grp = 0; grp < PROBE_GROUPS; grp++) {
		struct probe_status *st = &p->status[grp];
		struct group_progs g;
		if (!cfg->enabled[grp]) {
			st->state = PROBE_DISABLED;
			snprintf(st->detail, sizeof(st->detail), "turned off in the configuration");
			continue;
		}
		/* Group availability only needs the program handles; use a scratch open. */
		struct tracer_bpf *scratch = tracer_bpf__open();
		if (!scratch) {
			log_error("cannot open BPF object: %s", strerror(errno));
			return -1;
		}
		group_programs(p, scratch, grp, &g, why, sizeof(why));
		tracer_bpf__destroy(scratch);
		if (g.n == 0) {
			st->state = PROBE_MISSING;
			snprintf(st->detail, sizeof(st->detail), "%s", why);
			continue;
		}
		st->state = PROBE_ACTIVE;
		want[grp] = true;
	}
	/* Socket tracepoints missing: count socket syscalls' bytes instead. */
	if (cfg->enabled[PROBE_NETWORK] && p->status[PROBE_NETWORK].state == PROBE_MISSING &&
	    want[PROBE_SYSCALLS]) {
		p->net_via_syscalls = true;
		p->status[PROBE_NETWORK].state = PROBE_ACTIVE;
		snprintf(p->status[PROBE_NETWORK].detail, sizeof(p->status[PROBE_NETWORK].detail),
			 "fallback: bytes of sendto/sendmsg/recvfrom/recvmsg");
	}
	return 0;
}

/* Something did not load here: keep what does, one group at a time. */
static int load_group_by_group(struct probes *p, const struct collector_config *cfg,
			       const bool *want)
{
	bool have[PROBE_GROUPS] = {false};

	have[PROBE_PROCESS] = true;
	if (p->using_tp_btf && try_load(p, cfg, have, true) != 0) {
		log_warn("tp_btf process probes failed to load; trying classic tracepoints");
		p->using_tp_btf = p->exec_btf = false;
		ensure_tracefs();
	}
	if (try_load(p, cfg, have, false) != 0) {
		log_error("cannot load the process probes: is this root (or CAP_BPF+CAP_PERFMON) "
			  "on a kernel with BTF (/sys/kernel/btf/vmlinux)?");
		return -1;
	}
	for (int grp = PROBE_PROCESS + 1; grp < PROBE_GROUPS; grp++) {
		if (!want[grp])
			continue;
		have[grp] = true;
		if (try_load(p, cfg, have, true) != 0) {
			have[grp] = false;
			p->status[grp].state = PROBE_MISSING;
			snprintf(p->status[grp].detail, sizeof(p->status[grp].detail),
				 "programs do not load on this kernel");
			log_warn(
			    "probe group %s does not load on this kernel; continuing without it",
			    probe_group_name(grp));
		}
	}
	return try_load(p, cfg, have, false);
}

int probes_start(struct probes *p, const struct collector_config *cfg)
{
	bool want[PROBE_GROUPS] = {false};

	memset(p, 0, sizeof(*p));
	p->ring_mb = cfg->ring_mb;
	p->force_net_syscalls = cfg->force_net_syscalls;
	libbpf_set_print(libbpf_to_log);
	probe_kernel_features(p, cfg);
	if (choose_groups(p, cfg, want) != 0)
		return -1;
	/* Perf buffers are their reader's: nothing would wait for the next one. */
	p->pinning = cfg->keep_pinned && !p->using_perfbuf && pins_ready(p, cfg->socket_path);
	p->snapshot_iter = true;
	if (try_load(p, cfg, want, true) == 0)
		return 0;
	if (p->pinning) { /* a pin that cannot be made is no reason to record nothing */
		log_warn("loading with pins failed: loading unpinned (a restart will be blind)");
		p->pinning = false;
		if (try_load(p, cfg, want, true) == 0)
			return 0;
	}
	/* Perhaps only the sleepable snapshot iterator is new to this kernel. */
	p->snapshot_iter = false;
	if (try_load(p, cfg, want, false) != 0)
		return load_group_by_group(p, cfg, want);
	return 0;
}

void probes_snapshot_attach(struct probes *p)
{
	if (p->snapshot_iter &&
	    !(p->snapshot_link = bpf_program__attach_iter(p->skel->progs.snapshot_tasks, NULL)))
		p->snapshot_errno = errno;
}

int probes_snapshot_open(struct probes *p)
{
	int fd = p->snapshot_link ? bpf_iter_create(bpf_link__fd(p->snapshot_link)) : -1;

	if (fd < 0)
		log_warn("no snapshot of the processes already running: %s",
			 !p->snapshot_iter
			     ? "its iterator does not load here (sleepable iterators: "
			       "5.18+)"
			 : p->snapshot_link ? strerror(errno)
					    : strerror(p->snapshot_errno));
	return fd;
}

void probes_snapshot_close(struct probes *p)
{
	bpf_link__destroy(p->snapshot_link);
	p->snapshot_link = NULL;
}

int probes_attach(struct probes *p)
{
	char why[160];

	for (int grp = 0; grp < PROBE_GROUPS; grp++) {
		struct probe_status *st = &p->status[grp];
		struct group_progs g;
		if (st->state != PROBE_ACTIVE)
			continue;
		group_programs(p, p->skel, grp, &g, why, sizeof(why));
		for (unsigned i = 0; i < g.n; i++) {
			/* One program can serve two groups (sys_exit): attach it once. */
			bool attached = false;
			for (unsigned k = 0; k < p->n_links; k++) /* each link is attached */
				attached |= p->link_progs[k] == g.progs[i];
			/* A reused pin set's links hold its programs attached. */
			if (attached || (p->reusing && grp != PROBE_SAMPLES))
				continue;
			struct bpf_link *link = grp == PROBE_SAMPLES
						    ? bpf_program__attach_iter(g.progs[i], NULL)
						    : bpf_program__attach(g.progs[i]);
			if (!link) {
				snprintf(st->detail, sizeof(st->detail), "cannot attach %s: %s",
					 bpf_program__name(g.progs[i]), strerror(errno));
				if (grp == PROBE_PROCESS) {
					log_error("%s", st->detail);
					return -1;
				}
				st->state = PROBE_MISSING;
				log_warn("probe group %s: %s", probe_group_name(grp), st->detail);
				break;
			}
			if (grp == PROBE_SAMPLES)
				p->iter_link = link;
			else if (p->pinning && !pins_link(p, link, (int)p->n_links))
				p->pinning =
				    false; /* no "whole" pin: the next collector starts afresh */
			if (grp != PROBE_SAMPLES && p->n_links < PROBES_MAX_LINKS) {
				p->link_progs[p->n_links] = g.progs[i];
				p->links[p->n_links++] = link;
			}
		}
		p->attached[grp] = g;
	}
	if (p->pinning && !p->reusing && p->n_links)
		pins_link(p, p->links[0], -1);
	p->attached_ns = now_boottime_ns();
	return 0;
}

/* "tp_btf: sched_switch,sched_wakeup": the hooks, each kind of attachment named where it changes.
 */
static void describe_hooks(struct probe_status *st, const struct group_progs *g)
{
	size_t o = 0;
	int prev_kind_len = -1;
	const char *prev_sec = "";

	for (unsigned i = 0; i < g->n && o < sizeof(st->detail); i++) {
		const char *sec = bpf_program__section_name(g->progs[i]);
		const char *hook = strrchr(sec, '/');
		const char *kind_end = strchr(sec, '/');
		int kind_len = kind_end ? (int)(kind_end - sec) : 0;
		hook = hook ? hook + 1 : sec;
		if (!strncmp(hook, "sys_exit_", 9) && strncmp(sec, "tp_btf", 6))
			hook += 9;
		bool new_kind =
		    kind_len != prev_kind_len || strncmp(sec, prev_sec, (size_t)kind_len) != 0;
		if (new_kind)
			o += (size_t)snprintf(st->detail + o, sizeof(st->detail) - o, "%s%.*s: %s",
					      i ? "; " : "", kind_len, sec, hook);
		else
			o += (size_t)snprintf(st->detail + o, sizeof(st->detail) - o, ",%s", hook);
		prev_kind_len = kind_len;
		prev_sec = sec;
	}
}

void probes_describe(struct probes *p)
{
	for (int grp = 0; grp < PROBE_GROUPS; grp++) {
		struct probe_status *st = &p->status[grp];
		if (st->state == PROBE_ACTIVE && !st->detail[0])
			describe_hooks(st, &p->attached[grp]);
		log_info("probes %-9s %-8s %s", probe_group_name(grp), probe_state_name(st->state),
			 st->detail);
	}
	log_info("events via %s", p->using_perfbuf ? "perf buffers" : "ring buffer");
	if (p->pinning)
		log_info("%s the pin set %s: the programs stay attached when we exit",
			 p->reusing ? "reusing" : "made", p->pin_dir);
}

int probes_ringbuf_fd(const struct probes *p)
{
	return bpf_map__fd(p->skel->maps.events);
}

int probes_perfbuf_fd(const struct probes *p)
{
	return bpf_map__fd(p->skel->maps.perf_events);
}

int probes_read_drops(const struct probes *p, uint64_t *out, uint64_t *net_wait)
{
	for (int i = 0; i < TRACER_DROP_SLOTS; i++)
		out[i] = __atomic_load_n(&p->skel->bss->drop_counts[i], __ATOMIC_RELAXED);
	for (int i = 0; i < TRACER_NETW_STATS; i++)
		net_wait[i] = __atomic_load_n(&p->skel->bss->net_wait_stats[i], __ATOMIC_RELAXED);
	return 0;
}

struct tracer_handover *probes_handover(const struct probes *p)
{
	return p->pinning ? &p->skel->bss->handover : NULL;
}

int probes_sample(struct probes *p, int (*sink)(void *ctx, const struct tracer_sample *s),
		  void *ctx)
{
	struct tracer_sample buf[64];
	int fd, records = 0;
	size_t have = 0;

	if (!p->iter_link)
		return 0;
	fd = bpf_iter_create(bpf_link__fd(p->iter_link));
	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t n = read(fd, (char *)buf + have, sizeof(buf) - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		size_t whole = have / sizeof(buf[0]);
		for (size_t i = 0; i < whole; i++) {
			if (sink(ctx, &buf[i]) == 0)
				records++;
		}
		have -= whole * sizeof(buf[0]);
		memmove(buf, (char *)buf + whole * sizeof(buf[0]), have);
	}
	close(fd);
	p->samples_taken++;
	return records;
}

static void *destroy_link(void *link)
{
	bpf_link__destroy(link);
	return NULL;
}

void probes_stop(struct probes *p)
{
	pthread_t threads[sizeof(p->links) / sizeof(p->links[0])];
	bool started[sizeof(p->links) / sizeof(p->links[0])] = {false};

	/*
	 * Detaching a classic tracepoint waits for an RCU grace period (~70 ms
	 * here), one after another: 0.4 s of a `tracer run` for the six syscall
	 * ones. Each in its own thread, the waits overlap.
	 */
	for (unsigned i = 0; i < p->n_links; i++)
		started[i] = pthread_create(&threads[i], NULL, destroy_link, p->links[i]) == 0;
	for (unsigned i = 0; i < p->n_links; i++) {
		if (started[i])
			pthread_join(threads[i], NULL);
		else
			bpf_link__destroy(p->links[i]);
	}
	bpf_link__destroy(p->iter_link);
	probes_snapshot_close(p);
	p->n_links = 0;
	p->iter_link = NULL;
	if (p->skel)
		tracer_bpf__destroy(p->skel);
	p->skel = NULL;
}
