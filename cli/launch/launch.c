#include "cli/launch/launch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fileutil.h"
#include "common/ipc_auth.h"
#include "common/timeutil.h"

#ifndef TRACER_LIBEXECDIR
#define TRACER_LIBEXECDIR "/usr/libexec/tracer"
#endif

/*
 * Beside this program in a build tree; PREFIX/libexec/tracer beside
 * PREFIX/bin once installed (any PREFIX, found from where tracer is); the
 * directory this build was configured to install into, last.
 */
int daemons_directory(char *out, size_t size)
{
	char exe[4096], self[4096], candidate[4200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	path_dirname(exe, self, sizeof(self));
	const char *const formats[] = {"%s", "%s/../libexec/tracer"};
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		char agg[4300];
		snprintf(candidate, sizeof(candidate), formats[i], self);
		snprintf(agg, sizeof(agg), "%s/tracer-aggregator", candidate);
		if (access(agg, X_OK) == 0) {
			snprintf(out, size, "%s", candidate);
			return 0;
		}
	}
	snprintf(out, size, "%s", TRACER_LIBEXECDIR);
	snprintf(candidate, sizeof(candidate), "%s/tracer-aggregator", out);
	return access(candidate, X_OK) == 0 ? 0 : -1;
}

static int lifeline_read = -1;

int daemon_lifeline(void)
{
	int fds[2];

	if (lifeline_read >= 0)
		return lifeline_read;
	if (pipe2(fds, O_CLOEXEC) != 0)
		return -1;
	/* The write end is never written: it only has to stay open while we live. */
	lifeline_read = fds[0];
	return lifeline_read;
}

/* A pipe whose read end holds the key (32 bytes fit its buffer), or -1. */
static int key_pipe(const uint8_t *key)
{
	int kp[2];

	if (pipe2(kp, O_CLOEXEC) != 0)
		return -1;
	if (write(kp[1], key, IPC_KEY_LEN) != IPC_KEY_LEN) {
		close(kp[0]);
		close(kp[1]);
		return -1;
	}
	close(kp[1]);
	return kp[0];
}

int daemon_start(struct daemon_proc *d, const char *name, char **argv, int timeout_ms,
		 const uint8_t *key)
{
	int fds[2], key_fd = -1;
	char fd_text[16], life_text[16], key_text[16], buf[16];
	size_t argc = 0, extra = 0;

	d->name = name;
	d->pid = -1;
	while (argv[argc])
		argc++;
	char **args = calloc(argc + 7, sizeof(*args));
	if (!args || (key && (key_fd = key_pipe(key)) < 0) || pipe2(fds, O_CLOEXEC) != 0) {
		free(args);
		if (key_fd >= 0)
			close(key_fd);
		return -1;
	}
	d->pid = fork();
	if (d->pid < 0) {
		free(args);
		return -1;
	}
	if (d->pid == 0) {
		/* Own session: a Ctrl-C meant for the traced command must not stop us. */
		setsid();
		int wfd = dup(fds[1]); /* dup'ed fds are not close-on-exec */
		snprintf(fd_text, sizeof(fd_text), "%d", wfd);
		memcpy(args, argv, argc * sizeof(*args));
		args[argc] = "--ready-fd";
		args[argc + 1] = fd_text;
		extra = argc + 2;
		if (lifeline_read >= 0) {
			snprintf(life_text, sizeof(life_text), "%d", dup(lifeline_read));
			args[extra++] = "--exit-with-fd";
			args[extra++] = life_text;
		}
		if (key_fd >= 0) {
			snprintf(key_text, sizeof(key_text), "%d", dup(key_fd));
			args[extra++] = "--key-fd";
			args[extra++] = key_text;
		}
		execv(args[0], args);
		fprintf(stderr, "tracer: cannot run %s: %s\n", args[0], strerror(errno));
		_exit(127);
	}
	free(args);
	if (key_fd >= 0)
		close(key_fd);
	close(fds[1]);
	struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
	int rv = poll(&pfd, 1, timeout_ms);
	ssize_t n = rv > 0 ? read(fds[0], buf, sizeof(buf)) : 0;
	close(fds[0]);
	if (n >= 5 && memcmp(buf, "ready", 5) == 0)
		return 0;
	fprintf(stderr, "tracer: %s did not start (%s)\n", name,
		rv == 0 ? "timed out" : "exited early; see its messages above");
	daemon_stop(d, 1000);
	return -1;
}

int daemon_stop(struct daemon_proc *d, int timeout_ms)
{
	int status = -1;
	uint64_t deadline = now_monotonic_ns() + (uint64_t)timeout_ms * NSEC_PER_MSEC;

	if (d->pid <= 0)
		return -1;
	kill(d->pid, SIGTERM);
	for (;;) {
		pid_t r = waitpid(d->pid, &status, WNOHANG);
		if (r == d->pid)
			break;
		if (r < 0 && errno != EINTR) {
			status = -1;
			break;
		}
		if (now_monotonic_ns() > deadline) {
			fprintf(stderr, "tracer: %s did not stop; killing it\n", d->name);
			kill(d->pid, SIGKILL);
			waitpid(d->pid, &status, 0);
			break;
		}
		sleep_ns(10 * NSEC_PER_MSEC);
	}
	d->pid = -1;
	return status;
}

/* Whether a process has id as a uid, a gid or one of its supplementary groups. */
static bool id_in_use(unsigned id)
{
	DIR *proc = opendir("/proc");
	struct dirent *e;
	char path[64], text[4096], needle[24];
	bool used = false;

	if (!proc)
		return true;
	snprintf(needle, sizeof(needle), "%u", id);
	while (!used && (e = readdir(proc))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/status", e->d_name);
		if (read_small_file(path, text, sizeof(text)) < 0)
			continue;
		for (char *line = strtok(text, "\n"); line && !used; line = strtok(NULL, "\n")) {
			if (strncmp(line, "Uid:", 4) != 0 && strncmp(line, "Gid:", 4) != 0 &&
			    strncmp(line, "Groups:", 7) != 0)
				continue;
			for (char *w = strchr(line, ':') + 1; *w && !used;) {
				size_t n = strcspn(w += strspn(w, " \t"), " \t");
				used = n == strlen(needle) && strncmp(w, needle, n) == 0;
				w += n;
			}
		}
	}
	closedir(proc);
	return used;
}

unsigned unused_id(void)
{
	for (int tries = 0; tries < 32; tries++) {
		uint16_t r = 0;
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			return 0;
		unsigned id = 61184 + (unsigned)(r % (65519 - 61184 + 1));
		if (!getgrgid((gid_t)id) && !getpwuid((uid_t)id) && !id_in_use(id))
			return id;
	}
	return 0;
}
