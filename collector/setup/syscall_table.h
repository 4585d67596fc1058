/*
 * Syscall number -> class (file, network, memory, process) for the syscall
 * counters. Anything not listed counts as "other". Per architecture; only
 * x86_64 has a table today (elsewhere every syscall is "other", and the
 * collector says so).
 */
#ifndef TRACER_SYSCALL_TABLE_H
#define TRACER_SYSCALL_TABLE_H

#include <stdint.h>

struct syscall_class_entry {
	uint16_t nr;
	uint8_t cls;
};

extern const struct syscall_class_entry syscall_table[];
extern const unsigned syscall_table_size;

#endif
