/*
 * The programs of each probe group, and whether this kernel has their hooks
 * (BTF tracepoints, syscall tracepoints, kfuncs): probes.c loads and attaches
 * what this says.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "collector/setup/internal.h"
#include "collector/setup/probes.h"
#include "common/log.h"
#include "tracer.skel.h"

bool has_btf_tracepoint(const char *name)
{
	return libbpf_find_vmlinux_btf_id(name, BPF_TRACE_RAW_TP) > 0;
}

/* A kernel function by name in vmlinux BTF (how kfuncs are found). */
bool has_kernel_function(const char *name)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	bool found;

	if (!vmlinux)
		return false;
	found = btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC) > 0;
	btf__free(vmlinux);
	return found;
}

static bool has_syscall_tracepoint(const char *name)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/syscalls/%s", name);
	if (stat(path, &st) == 0)
		return true;
	snprintf(path, sizeof(path), "/sys/kernel/debug/tracing/events/syscalls/%s", name);
	return stat(path, &st) == 0;
}

/*
 * Classic tracepoints are attached by their tracefs id. Where tracefs is not
 * mounted (minimal hosts and containers), mount it at its usual place.
 */
void ensure_tracefs(void)
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

static void add(struct group_progs *g, struct bpf_program *prog)
{
	if (g->n < MAX_GROUP_PROGS)
		g->progs[g->n++] = prog;
}

/* The programs of a group that this kernel can run (empty: the group is missing). */
static void process_programs(struct probes *p, struct tracer_bpf *s, struct group_progs *g,
			     char *why, size_t why_size)
{
	if (p->using_tp_btf) {
		add(g, s->progs.fork_btf);
		add(g, s->progs.exit_btf);
		if (p->prepare_exec)
			add(g, s->progs.prepare_exec_btf);
		add(g, p->exec_btf ? s->progs.exec_btf : s->progs.exec_tp);
		/* Who sent a killing signal (signal:signal_generate, in every kernel
		 * with BTF tracepoints; looking it up would parse vmlinux BTF again). */
		add(g, s->progs.signal_btf);
	} else {
		if (p->prepare_exec)
			add(g, s->progs.prepare_exec_btf);
		add(g, s->progs.fork_tp);
		add(g, s->progs.exec_tp);
		add(g, s->progs.exit_tp);
	}
}

/* A begin/end or send/receive pair: both programs when both BTF tracepoints exist. */
static bool add_pair(struct group_progs *g, const char *tp_a, struct bpf_program *a,
		     const char *tp_b, struct bpf_program *b)
{
	if (!has_btf_tracepoint(tp_a) || !has_btf_tracepoint(tp_b))
		return false;
	add(g, a);
	add(g, b);
	return true;
}

static void network_programs(struct probes *p, struct tracer_bpf *s, struct group_progs *g,
			     char *why, size_t why_size)
{
	if (!p->force_net_syscalls && add_pair(g, "sock_send_length", s->progs.net_send,
					       "sock_recv_length", s->progs.net_recv))
		/* TCP reads by what they consume: splice and zero-copy receives too. */
		p->tcp_by_consumption = add_pair(g, "tcp_rcv_space_adjust", s->progs.net_tcp_read,
						 "inet_sock_set_state", s->progs.net_tcp_state);
	else
		snprintf(why, why_size, "no sock:sock_send_length/sock_recv_length (Linux 6.3+)");
}

static void reclaim_programs(struct probes *p, struct tracer_bpf *s, struct group_progs *g,
			     char *why, size_t why_size)
{
	if (add_pair(g, "mm_vmscan_direct_reclaim_begin", s->progs.reclaim_direct_begin,
		     "mm_vmscan_direct_reclaim_end", s->progs.reclaim_direct_end))
		add_pair(g, "mm_vmscan_memcg_reclaim_begin", s->progs.reclaim_memcg_begin,
			 "mm_vmscan_memcg_reclaim_end", s->progs.reclaim_memcg_end);
	else
		snprintf(why, why_size, "no vmscan direct reclaim tracepoints");
}

static void files_programs(struct probes *p, struct tracer_bpf *s, struct group_progs *g, char *why,
			   size_t why_size)
{
	/*
	 * Syscall tracepoints, not a raw sys_exit hook: the kernel runs our
	 * programs for the open family only, other syscalls pay a bit test.
	 */
	ensure_tracefs();
	if (has_syscall_tracepoint("sys_exit_openat")) {
		add(g, p->rdonly_cast ? s->progs.file_openat_exit : s->progs.file_openat_uncached);
		if (has_syscall_tracepoint("sys_exit_openat2"))
			add(g, s->progs.file_openat2_exit);
		if (has_syscall_tracepoint("sys_exit_open"))
			add(g, s->progs.file_open_exit);
		if (has_syscall_tracepoint("sys_exit_creat"))
			add(g, s->progs.file_creat_exit);
		/* A relative open after a chdir is relative to the new cwd. */
		if (has_syscall_tracepoint("sys_exit_chdir"))
			add(g, s->progs.cwd_chdir_exit);
		if (has_syscall_tracepoint("sys_exit_fchdir"))
			add(g, s->progs.cwd_fchdir_exit);
	} else {
		snprintf(why, why_size, "no syscall tracepoints (CONFIG_FTRACE_SYSCALLS, tracefs)");
	}
}

static void samples_programs(struct probes *p, struct tracer_bpf *s, struct group_progs *g,
			     char *why, size_t why_size)
{
	add(g, s->progs.sample_processes);
}

/* Groups whose programs need their BTF tracepoints and nothing else: one program per
 * tracepoint (a group of one has a NULL second). */
struct plain_group {
	const char *tracepoints[2];
	size_t programs[2]; /* where the skeleton keeps each: offsetof its progs member */
	const char *missing;
};

#define PROG(name) offsetof(struct tracer_bpf, progs.name)
static const struct plain_group plain_groups[PROBE_GROUPS] = {
    [PROBE_SCHEDULER] = {{"sched_switch", "sched_wakeup"},
			 {PROG(iowait_switch), PROG(iowait_wakeup)},
			 "no BTF tracepoints sched_switch/sched_wakeup"},
    [PROBE_SYSCALLS] = {{"sys_exit"},
			{PROG(count_syscall)},
			"no BTF tracepoint raw_syscalls:sys_exit"},
    [PROBE_OOM] = {{"mark_victim"}, {PROG(oom_victim)}, "no BTF tracepoint oom:mark_victim"},
    [PROBE_CGROUPS] = {{"cgroup_mkdir", "cgroup_rmdir"},
		       {PROG(cgroup_mkdir), PROG(cgroup_rmdir)},
		       "no BTF tracepoints cgroup:cgroup_mkdir/rmdir"},
};

static void plain_programs(const struct plain_group *pg, struct tracer_bpf *s,
			   struct group_progs *g, char *why, size_t why_size)
{
	for (int i = 0; i < 2; i++)
		if (pg->tracepoints[i] && !has_btf_tracepoint(pg->tracepoints[i])) {
			snprintf(why, why_size, "%s", pg->missing);
			return;
		}
	for (int i = 0; i < 2; i++)
		if (pg->tracepoints[i])
			add(g, *(struct bpf_program **)((char *)s + pg->programs[i]));
}

/* The programs of the other groups, and why a group cannot load here (why set, none added). */
static void (*const group_program_fns[PROBE_GROUPS])(struct probes *p, struct tracer_bpf *s,
						     struct group_progs *g, char *why,
						     size_t why_size) = {
    [PROBE_PROCESS] = process_programs, [PROBE_NETWORK] = network_programs,
    [PROBE_RECLAIM] = reclaim_programs, [PROBE_FILES] = files_programs,
    [PROBE_SAMPLES] = samples_programs,
};

void group_programs(struct probes *p, struct tracer_bpf *s, enum probe_group grp,
		    struct group_progs *g, char *why, size_t why_size)
{
	g->n = 0;
	why[0] = '\0';
	if ((unsigned)grp >= PROBE_GROUPS)
		return;
	if (plain_groups[grp].missing)
		plain_programs(&plain_groups[grp], s, g, why, why_size);
	else if (group_program_fns[grp])
		group_program_fns[grp](p, s, g, why, why_size);
}
