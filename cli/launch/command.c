#include "cli/launch/command.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * sudo leaves root's HOME, USER and LOGNAME: the command runs as the user, so
 * it gets the user's, from the passwd entry (and the user's SHELL). PATH stays
 * as sudo set it (README: `sudo -E` or `sudo env "PATH=$PATH"` keep yours).
 */
static void user_environment(const struct run_as *as_user)
{
	struct passwd *pw = getpwuid(as_user->uid);

	if (!pw)
		return;
	setenv("HOME", pw->pw_dir, 1);
	setenv("USER", pw->pw_name, 1);
	setenv("LOGNAME", pw->pw_name, 1);
	if (pw->pw_shell && *pw->pw_shell)
		setenv("SHELL", pw->pw_shell, 1);
}

bool command_exists(const char *name)
{
	struct stat st;

	if (strchr(name, '/'))
		return stat(name, &st) == 0;
	const char *path = getenv("PATH"); /* tracer's own environment, which CMD inherits */
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		char candidate[4200];
		snprintf(candidate, sizeof(candidate), "%.*s%s%s", (int)len, path, len ? "/" : "",
			 name);
		if (stat(candidate, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
			return true;
		path += len + (path[len] == ':');
	}
	return false;
}

pid_t start_command(char **command, const struct run_as *as_user)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	if (as_user && geteuid() == 0 && as_user->uid != 0) {
		if (initgroups(as_user->name, as_user->gid) != 0 || setgid(as_user->gid) != 0 ||
		    setuid(as_user->uid) != 0) {
			fprintf(stderr, "tracer run: cannot become %s: %s\n", as_user->name,
				strerror(errno));
			_exit(126);
		}
		user_environment(as_user);
	}
	execvp(command[0], command);
	fprintf(stderr, "tracer run: %s: %s\n", command[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}
