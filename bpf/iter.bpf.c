// SPDX-License-Identifier: GPL-2.0
/*
 * Live samples: the collector runs this task iterator every interval (1 s by
 * default). It writes one record per process that did something since the
 * last pass (CPU time or RSS changed): idle processes cost a skipped check
 * in the kernel and nothing else. Threads are summed with the open-coded
 * thread iterator where the kernel has it (6.7+), else the leader alone.
 */
#include "common.bpf.h"

#ifndef bpf_ksym_exists /* libbpf < 1.2 */
#define bpf_ksym_exists(sym) (!!(sym))
#endif

extern int bpf_iter_task_new(struct bpf_iter_task *it, struct task_struct *task,
			     unsigned int flags) __weak __ksym;
extern struct task_struct *bpf_iter_task_next(struct bpf_iter_task *it) __weak __ksym;
extern void bpf_iter_task_destroy(struct bpf_iter_task *it) __weak __ksym;

static __always_inline void add_thread(struct tracer_sample *s, struct task_struct *t)
{
	s->utime_ns += t->utime;
	s->stime_ns += t->stime;
	s->runtime_ns += t->se.sum_exec_runtime;
	s->rchar += t->ioac.rchar;
	s->wchar += t->ioac.wchar;
	s->read_bytes += t->ioac.read_bytes;
	s->write_bytes += t->ioac.write_bytes;
	s->vol_ctxsw += t->nvcsw;
	s->invol_ctxsw += t->nivcsw;
	s->runq_ns += t->sched_info.run_delay;
}

static __always_inline char state_char(struct task_struct *t)
{
	unsigned int st = BPF_CORE_READ(t, __state);

	if (st == 0)
		return 'R';
	if (st & 0x2)
		return 'D';
	if (st & 0x1)
		return 'S';
	if (st & 0x4)
		return 'T';
	if (st & 0x8)
		return 't';
	return '?';
}

/* All samples of one pass carry the pass's start time, so consumers can sum
 * concurrent processes per pass (peak cores of a step). */
__u64 pass_session = ~0ULL;
__u64 pass_ts_ns;

SEC("iter/task")
int sample_processes(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	struct tracer_sample s = {};
	struct signal_struct *sig;
	struct sample_mark *mine;
	struct dead_acc *dead;
	struct proc_acc acc;

	if (!task || task->pid != task->tgid || (task->flags & PF_KTHREAD) || task->exit_state)
		return 0;
	sig = task->signal;
	__u32 tgid = task->tgid;
	s.pid = ns_tgid_x(task, true);
	if (!s.pid) /* outside a container collector's namespace */
		return 0;
	s.start_ns = task->start_boottime;
	if (ctx->meta->session_id != pass_session) {
		pass_session = ctx->meta->session_id;
		pass_ts_ns = bpf_ktime_get_boot_ns();
	}
	s.ts_ns = pass_ts_ns;
	s.utime_ns = BPF_CORE_READ(sig, utime);
	s.stime_ns = BPF_CORE_READ(sig, stime);
	s.runtime_ns = BPF_CORE_READ(sig, sum_sched_runtime);
	s.vol_ctxsw = BPF_CORE_READ(sig, nvcsw);
	s.invol_ctxsw = BPF_CORE_READ(sig, nivcsw);
	s.nthreads = BPF_CORE_READ(sig, nr_threads);
	dead = bpf_map_lookup_elem(&dead_threads, &tgid);
	if (dead && dead->start_ns == s.start_ns) {
		s.rchar = dead->rchar;
		s.wchar = dead->wchar;
		s.read_bytes = dead->read_bytes;
		s.write_bytes = dead->write_bytes;
		s.runq_ns = dead->runq_ns;
	}
	proc_acc_sum(tgid, &acc);
	s.iowait_ns = acc.iowait_ns;
	s.net_tx_bytes = acc.net_tx_bytes;
	s.net_rx_bytes = acc.net_rx_bytes;
	if (bpf_ksym_exists(bpf_iter_task_new)) {
		struct bpf_iter_task it;
		struct task_struct *t;

		bpf_iter_task_new(&it, task, BPF_TASK_ITER_PROC_THREADS);
		while ((t = bpf_iter_task_next(&it)))
			add_thread(&s, t);
		bpf_iter_task_destroy(&it);
	} else {
		add_thread(&s, task);
	}
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	s.rss_kb = mm ? mm_rss_kb(mm) : 0;
	s.state = state_char(task);

	/* Unchanged since the last pass: nothing to say. */
	mine = bpf_task_storage_get(&sample_marks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (mine) {
		if (mine->runtime == s.runtime_ns && mine->rss == s.rss_kb)
			return 0;
		mine->runtime = s.runtime_ns;
		mine->rss = s.rss_kb;
	}
	bpf_seq_write(seq, &s, sizeof(s));
	return 0;
}
