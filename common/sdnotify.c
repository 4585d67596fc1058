#include "common/sdnotify.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int notify_fd = -1;
static struct sockaddr_un notify_addr;
static socklen_t notify_len;
static uint64_t watchdog_every_ns, last_watchdog_ns;

void sdnotify_init(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	const char *wd = getenv("WATCHDOG_USEC");

	if (!path || !*path || strlen(path) >= sizeof(notify_addr.sun_path))
		return;
	memset(&notify_addr, 0, sizeof(notify_addr));
	notify_addr.sun_family = AF_UNIX;
	memcpy(notify_addr.sun_path, path, strlen(path));
	if (path[0] == '@') /* abstract namespace */
		notify_addr.sun_path[0] = '\0';
	notify_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (wd) {
		unsigned long long usec = strtoull(wd, NULL, 10);
		watchdog_every_ns = usec * 1000ULL / 2;
	}
}

static void send_state(const char *state)
{
	if (notify_fd < 0)
		return;
	if (sendto(notify_fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&notify_addr,
		   notify_len) < 0) {
		/* The manager went away: nothing more to tell it. */
	}
}

void sdnotify_ready(void)
{
	send_state("READY=1");
}

void sdnotify_stopping(void)
{
	send_state("STOPPING=1");
}

void sdnotify_watchdog(uint64_t now_boot_ns)
{
	if (!watchdog_every_ns || now_boot_ns - last_watchdog_ns < watchdog_every_ns)
		return;
	last_watchdog_ns = now_boot_ns;
	send_state("WATCHDOG=1");
}

bool sdnotify_active(void)
{
	return notify_fd >= 0;
}
