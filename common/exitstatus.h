/* Decoding the kernel's raw wait status (the value wait(2) returns). */
#ifndef TRACER_EXITSTATUS_H
#define TRACER_EXITSTATUS_H

#include <stdbool.h>

struct exit_status {
	bool exited; /* normal exit: code is valid */
	int code;    /* 0..255 */
	int signal;  /* killing signal when !exited */
	bool core_dumped;
};

struct exit_status exit_status_decode(int raw);
/* The shell convention: code, or 128 + signal. */
int exit_status_shell(struct exit_status st);

#endif
