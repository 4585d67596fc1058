/*
 * One writer per database: an aggregator holds an exclusive lock on
 * DB.lock for as long as it writes DB, so a second one (another `tracer run`
 * on the same --db, or the daemons) is refused at once instead of storing
 * every process twice.
 */
#ifndef TRACER_DBLOCK_H
#define TRACER_DBLOCK_H

#include <sys/types.h>

/* Takes the lock and writes our pid in it: the descriptor (kept open), or -1
 * with *holder set to the pid holding it (0 if unknown, errno for others). */
int dblock_take(const char *db_path, pid_t *holder);
/* Is the lock free now? 1 free, 0 held (*holder its pid), -1 cannot tell. */
int dblock_probe(const char *db_path, pid_t *holder);

#endif
