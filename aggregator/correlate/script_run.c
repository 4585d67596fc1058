/*
 * Which shell scripts start a run of their own. A user starts scripts from a
 * shell, sudo, ssh, tmux or screen, and just as often from a program: a
 * Python driver's subprocess, a test harness, a notebook, cron's `sh -c`,
 * `systemd-run`. What the installed daemons must not take for a user's run is
 * the system's own scripts: those a deny-listed daemon runs (systemd's units,
 * dhclient's hooks) and the installed scripts a dispatcher runs (run-parts,
 * ifupdown, apt and dpkg hooks under /etc and /usr).
 */
#include "aggregator/correlate/internal.h"

#include <stdio.h>
#include <string.h>

#include "common/fileutil.h"

/* Programs a user starts scripts from: a shell, or a login or terminal launcher. */
static bool interactive_parent(const struct proc *parent)
{
	static const char *const launchers[] = {"bash",	  "sh",	    "zsh",	    "dash",  "fish",
						"sudo",	  "su",	    "sshd",	    "login", "tmux",
						"screen", "tracer", "sshd-session", "ksh"};
	const char *base = path_basename(parent->row.exe);

	for (size_t i = 0; i < sizeof(launchers) / sizeof(*launchers); i++)
		if (!strcmp(base, launchers[i]))
			return true;
	return false;
}

/* The script file is one the system installed (/etc, /usr, /lib, ...). */
static bool system_script(const struct process_view *v)
{
	static const char *const dirs[] = {"/etc/", "/usr/",  "/lib/",	  "/lib64/",
					   "/bin/", "/sbin/", "/var/lib/"};
	char path[1024];

	for (size_t i = 1; i < v->argc; i++) {
		if (strcmp(path_basename(v->argv[i]), v->tool->program) != 0)
			continue;
		if (v->argv[i][0] == '/' || !v->cwd)
			snprintf(path, sizeof(path), "%s", v->argv[i]);
		else
			snprintf(path, sizeof(path), "%s/%s", v->cwd, v->argv[i]);
		for (size_t d = 0; d < sizeof(dirs) / sizeof(*dirs); d++)
			if (!strncmp(path, dirs[d], strlen(dirs[d])))
				return true;
		return false;
	}
	return false;
}

/* A transient unit of systemd-run (run-u12.service, run-r3f....scope). */
static bool systemd_run_unit(const struct process_view *v)
{
	return v->cgroup && !strncmp(v->cgroup->unit, "run-", 4);
}

bool script_starts_run(const struct proc *parent, const struct process_view *v)
{
	if (!parent || !parent->row.exe)
		return false;
	if (interactive_parent(parent))
		return true;
	if (systemd_run_unit(v))
		return true;
	return !parent->in.denied && !system_script(v);
}
