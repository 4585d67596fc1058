#include "collector/setup/sandbox.h"
#include "collector/setup/internal.h"

#include <errno.h>
#include <seccomp.h>
#include <string.h>

#include "common/log.h"

/*
 * Measured with strace -f on the collector through the integration suite
 * (docs/security.md): the ring-buffer and perf-buffer epoll loop, reading the
 * task iterator and the maps (bpf), nng's threads and its Unix socket,
 * malloc, clocks, signals, logging to stderr, and the service manager notify
 * socket (sendto on an fd opened before).
 */
static const int allowed[] = {
    SCMP_SYS(read),
    SCMP_SYS(write),
    SCMP_SYS(writev),
    SCMP_SYS(readv),
    SCMP_SYS(close),
    SCMP_SYS(lseek),
    SCMP_SYS(fstat),
    SCMP_SYS(newfstatat),
    SCMP_SYS(epoll_wait),
    SCMP_SYS(epoll_pwait),
    SCMP_SYS(epoll_ctl),
    SCMP_SYS(epoll_create1),
    SCMP_SYS(poll),
    SCMP_SYS(ppoll),
    SCMP_SYS(eventfd2),
    SCMP_SYS(pipe2),
    SCMP_SYS(bpf),
    SCMP_SYS(ioctl),
    SCMP_SYS(mmap),
    SCMP_SYS(munmap),
    SCMP_SYS(mprotect),
    SCMP_SYS(madvise),
    SCMP_SYS(brk),
    SCMP_SYS(mremap),
    SCMP_SYS(futex),
    SCMP_SYS(clone),
    SCMP_SYS(clone3),
    SCMP_SYS(set_robust_list),
    SCMP_SYS(rseq),
    SCMP_SYS(exit),
    SCMP_SYS(exit_group),
    SCMP_SYS(gettid),
    SCMP_SYS(getpid),
    SCMP_SYS(tgkill),
    SCMP_SYS(rt_sigaction),
    SCMP_SYS(rt_sigprocmask),
    SCMP_SYS(rt_sigreturn),
    SCMP_SYS(sigaltstack),
    SCMP_SYS(clock_gettime),
    SCMP_SYS(clock_nanosleep),
    SCMP_SYS(nanosleep),
    SCMP_SYS(gettimeofday),
    SCMP_SYS(sched_yield),
    SCMP_SYS(sched_getaffinity),
    SCMP_SYS(socket),
    SCMP_SYS(connect),
    SCMP_SYS(sendmsg),
    SCMP_SYS(recvmsg),
    SCMP_SYS(sendto),
    SCMP_SYS(recvfrom),
    SCMP_SYS(getsockopt),
    SCMP_SYS(setsockopt),
    SCMP_SYS(getsockname),
    SCMP_SYS(getpeername),
    SCMP_SYS(shutdown),
    SCMP_SYS(fcntl),
    SCMP_SYS(getrandom),
    SCMP_SYS(restart_syscall),
    SCMP_SYS(prctl),
    SCMP_SYS(getuid),
    SCMP_SYS(geteuid),
    SCMP_SYS(getgid),
    SCMP_SYS(getegid),
    SCMP_SYS(uname),
    SCMP_SYS(timerfd_create),
    SCMP_SYS(timerfd_settime),
    SCMP_SYS(getrusage),
    SCMP_SYS(sysinfo),
};

bool sandbox_active(void)
{
#ifdef TRACER_SANITIZED
	return false;
#else
	return true;
#endif
}

int sandbox_enter(void)
{
#ifdef TRACER_SANITIZED
	/* A test build's known state, not an operator's problem: info, not a warning on
	 * every `tracer run` (whose --json on stderr must stay one document). */
	log_info("sanitizer build: running without the syscall allow-list");
	return 0;
#endif
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int rc = ctx ? 0 : -ENOMEM;

	/* Every thread, not only ours: nng's, started before, read what the aggregator sends. */
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);

	for (size_t i = 0; rc == 0 && i < sizeof(allowed) / sizeof(*allowed); i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
	if (rc == 0)
		rc = seccomp_load(ctx);
	if (ctx)
		seccomp_release(ctx);
	if (rc != 0) {
		log_error("cannot install the syscall allow-list: %s", strerror(-rc));
		return -1;
	}
	return 0;
}
