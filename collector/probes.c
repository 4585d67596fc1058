#include "collector/probes.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/events.h"
#include "common/log.h"
#include "process.skel.h"

static int libbpf_to_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char msg[1024];
	size_t n;

	if (level == LIBBPF_DEBUG && log_get_level() < LOG_LVL_DEBUG)
		return 0;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	if (n && msg[n - 1] == '\n')
		msg[n - 1] = '\0';
	/* BPF memory is memcg-accounted on 5.11+; the memlock limit does not apply. */
	if (strstr(msg, "RLIMIT_MEMLOCK"))
		level = LIBBPF_DEBUG;
	log_msg(level == LIBBPF_WARN ? LOG_LVL_WARN : LOG_LVL_DEBUG, "libbpf: %s", msg);
	return 0;
}

static bool has_btf_tracepoint(const char *name)
{
	return libbpf_find_vmlinux_btf_id(name, BPF_TRACE_RAW_TP) > 0;
}

/*
 * Classic tracepoints are attached by their tracefs id. Where tracefs is not
 * mounted (minimal hosts and containers), mount it at its usual place.
 */
static void ensure_tracefs(void)
{
	struct stat st;

	if (stat("/sys/kernel/tracing/events", &st) == 0 ||
	    stat("/sys/kernel/debug/tracing/events", &st) == 0)
		return;
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL) == 0)
		log_info("mounted tracefs on /sys/kernel/tracing for classic tracepoints");
	else
		log_warn("tracefs is not mounted and mounting it failed: %s", strerror(errno));
}

static int try_load(struct probes *p, const struct probe_options *opt, bool btf)
{
	struct process_bpf *skel;
	int err;

	if (!btf)
		ensure_tracefs();
	skel = process_bpf__open();
	if (!skel) {
		log_error("cannot open BPF object: %s", strerror(errno));
		return -1;
	}
	skel->rodata->page_kb = (uint32_t)(sysconf(_SC_PAGESIZE) / 1024);
	skel->rodata->wakeup_bytes = (uint64_t)opt->ring_mb << 20 >> 2;
	skel->rodata->use_perfbuf = p->using_perfbuf;
	if (p->using_perfbuf) {
		/* The ring buffer stays unused: as small as allowed, or not created. */
		if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1)
			bpf_map__set_max_entries(skel->maps.events, (uint32_t)sysconf(_SC_PAGESIZE));
		else
			bpf_map__set_autocreate(skel->maps.events, false);
	} else {
		bpf_map__set_max_entries(skel->maps.events, opt->ring_mb << 20);
	}

	bpf_program__set_autoload(skel->progs.fork_btf, btf);
	bpf_program__set_autoload(skel->progs.exec_btf, btf);
	bpf_program__set_autoload(skel->progs.exit_btf, btf);
	bpf_program__set_autoload(skel->progs.fork_tp, !btf);
	bpf_program__set_autoload(skel->progs.exec_tp, !btf);
	bpf_program__set_autoload(skel->progs.exit_tp, !btf);
	p->prepare_exec = !opt->no_prepare_exec && has_btf_tracepoint("sched_prepare_exec");
	bpf_program__set_autoload(skel->progs.prepare_exec_btf, p->prepare_exec);

	err = process_bpf__load(skel);
	if (err) {
		log_warn("%s flavour failed to load: %s", btf ? "tp_btf" : "tracepoint",
			 strerror(-err));
		process_bpf__destroy(skel);
		return -1;
	}
	p->skel = skel;
	p->using_tp_btf = btf;
	return 0;
}

int probes_start(struct probes *p, const struct probe_options *opt)
{
	memset(p, 0, sizeof(*p));
	p->ring_mb = opt->ring_mb;
	libbpf_set_print(libbpf_to_log);

	p->using_perfbuf =
		opt->force_perfbuf || libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) != 1;
	if (p->using_perfbuf && !opt->force_perfbuf)
		log_warn("no BPF ring buffer in this kernel: using per-CPU perf buffers");
	bool btf = !opt->force_tracepoints && has_btf_tracepoint("sched_process_exec") &&
		   has_btf_tracepoint("sched_process_exit") &&
		   has_btf_tracepoint("sched_process_fork");
	if (try_load(p, opt, btf) != 0 && (!btf || try_load(p, opt, false) != 0)) {
		log_error("cannot load the process probes: is this root (or CAP_BPF+CAP_PERFMON) "
			  "on a kernel with BTF (/sys/kernel/btf/vmlinux)?");
		return -1;
	}
	return 0;
}

int probes_attach(struct probes *p)
{
	int err = process_bpf__attach(p->skel);

	if (err) {
		log_error("cannot attach the process probes: %s", strerror(-err));
		return -1;
	}
	snprintf(p->active, sizeof(p->active),
		 "sched_process_fork,sched_process_exec,sched_process_exit via %s%s; %s",
		 p->using_tp_btf ? "tp_btf" : "tracepoint",
		 p->prepare_exec ? "; sched_prepare_exec via tp_btf" : "",
		 p->using_perfbuf ? "perf buffers" : "ring buffer");
	log_info("probes attached: %s", p->active);
	return 0;
}

int probes_ringbuf_fd(const struct probes *p)
{
	return bpf_map__fd(p->skel->maps.events);
}

int probes_perfbuf_fd(const struct probes *p)
{
	return bpf_map__fd(p->skel->maps.perf_events);
}

int probes_read_drops(const struct probes *p, uint64_t *out)
{
	for (int i = 0; i < TRACER_DROP_MAX; i++)
		out[i] = __atomic_load_n(&p->skel->bss->drop_counts[i], __ATOMIC_RELAXED);
	return 0;
}

void probes_stop(struct probes *p)
{
	if (p->skel)
		process_bpf__destroy(p->skel);
	p->skel = NULL;
}
