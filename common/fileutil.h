/* Small file helpers shared by the daemons and the CLI. */
#ifndef TRACER_FILEUTIL_H
#define TRACER_FILEUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Reads at most size-1 bytes and NUL-terminates. Returns bytes read or -1. */
ssize_t read_small_file(const char *path, char *buf, size_t size);
/* Reads everything (up to size) without terminating: for binary content. */
ssize_t read_file_bytes(const char *path, char *buf, size_t size);
/* mkdir -p with mode for the directories it creates. 0 or -1 (errno set). */
int mkdir_parents(const char *path, mode_t mode);
/* The directory part of path, in out. */
void path_dirname(const char *path, char *out, size_t size);
const char *path_basename(const char *path);
/*
 * A data file tracer ships: installed when readable, else the copy a build
 * tree or a relocated install keeps beside the program (../deploy/etc,
 * ../../deploy/etc or ../share/tracer from its folder, by name). The path is
 * in buf; NULL when none is readable.
 */
const char *path_find_shipped(const char *installed, const char *name, char *buf, size_t size);
/* Whether fd, a pipe's read end, has no writer left (without blocking); never for -1. */
bool fd_hung_up(int fd);

/*
 * Whether path is a file only root could have put there: it and its
 * directory owned by root and writable by no one else. Names alone are
 * anyone's: a user's own `tracer` or `sshd` is not tracer's or the system's.
 */
bool path_root_only(const char *path);

#endif
