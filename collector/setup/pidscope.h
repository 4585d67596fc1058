/* The PID namespace a collector records (--scope-pidns, [collector] scope-pidns). */
#ifndef TRACER_COLLECTOR_PIDSCOPE_H
#define TRACER_COLLECTOR_PIDSCOPE_H

#include <stddef.h>
#include <stdint.h>

struct pidscope {
	uint32_t inode; /* 0: none set */
};

/* A PID (its namespace) or a namespace inode. 0, or -1 with the reason in why. */
int pidscope_resolve(const char *value, struct pidscope *s, char *why, size_t size);

#endif
