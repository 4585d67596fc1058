/*
 * The service manager's readiness and watchdog protocol (sd_notify(3)): one
 * datagram "READY=1" or "WATCHDOG=1" to the socket systemd names in our own
 * NOTIFY_SOCKET. The socket is opened once at start, so it keeps working after
 * privileges are dropped and the syscall filter is on. Without systemd these
 * are no-ops.
 */
#ifndef TRACER_SDNOTIFY_H
#define TRACER_SDNOTIFY_H

#include <stdbool.h>
#include <stdint.h>

/* Reads NOTIFY_SOCKET and WATCHDOG_USEC of this process (set by systemd for it). */
void sdnotify_init(void);
void sdnotify_ready(void);
void sdnotify_stopping(void);
/* Sends WATCHDOG=1 if half the watchdog interval has passed since the last one. */
void sdnotify_watchdog(uint64_t now_boot_ns);
bool sdnotify_active(void);

#endif
