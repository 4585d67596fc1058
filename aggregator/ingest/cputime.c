#include "aggregator/ingest/cputime.h"

void cputime_adjust(uint64_t utime, uint64_t stime, uint64_t rtime, uint64_t *user_out,
		    uint64_t *sys_out)
{
	uint64_t s;

	if (stime == 0) {
		*user_out = rtime;
		*sys_out = 0;
		return;
	}
	if (utime == 0) {
		*user_out = 0;
		*sys_out = rtime;
		return;
	}
	/* stime * rtime / (stime + utime) without overflowing 64 bits. */
	s = (uint64_t)((unsigned __int128)stime * rtime / ((unsigned __int128)stime + utime));
	*sys_out = s;
	*user_out = rtime - s;
}
