/*
 * The wall clock. Events carry the boot clock; a frame carries the wall clock
 * minus the boot clock when it was sent. This is the one place that turns one
 * into the other.
 */
#include "aggregator/ingest/internal.h"

#include <string.h>

#include "common/hostinfo.h"
#include "common/log.h"
#include "common/strutil.h"
#include "common/timeutil.h"

/*
 * The wall and boot clocks run at one rate (NTP's slewing adjusts both), so
 * their difference changes only when the wall clock is stepped; what a frame
 * carries otherwise differs by how precisely it was measured, nanoseconds.
 */
#define CLOCK_STEP_MIN_NS ((int64_t)(50 * NSEC_PER_MSEC))

int64_t frame_epoch_ns(const struct ingest *g, uint64_t boot_ns)
{
	return (int64_t)boot_ns + g->offset_ns;
}

/*
 * A process keeps the wall clock it was first seen under: its images, samples,
 * files and end are its start plus boot-clock time, so a step of the wall
 * clock (NTP's first sync, a VM resumed) while it runs cannot change its
 * duration or put its end before its start.
 */
int64_t proc_epoch_ns(const struct proc *p, uint64_t boot_ns)
{
	return (int64_t)boot_ns + p->life.epoch_offset_ns;
}

/*
 * The offset moves only at a step, so processes first seen between two steps
 * share it exactly, and their samples of one pass share a wall-clock time.
 */
static void follow_clock(struct ingest *g, int64_t frame_offset_ns, bool same_boot)
{
	int64_t step_ns = frame_offset_ns - g->offset_ns;

	if (g->has_offset && same_boot) {
		if (step_ns > -CLOCK_STEP_MIN_NS && step_ns < CLOCK_STEP_MIN_NS)
			return;
		g->stats.clock_steps++;
		g->stats.last_clock_step_ns = step_ns;
		log_warn("the wall clock was stepped by %+.3f s; processes running across the step "
			 "keep the clock they started under",
			 (double)step_ns / 1e9);
	}
	g->has_offset = true;
	g->offset_ns = frame_offset_ns;
}

void ingest_set_frame_context(struct ingest *g, const Tracer__Frame *f)
{
	char boot_id[sizeof(g->boot_id)];

	format_hex(f->boot_id.data, (unsigned)f->boot_id.len, boot_id, sizeof(boot_id));
	follow_clock(g, f->realtime_offset_ns, strcmp(boot_id, g->boot_id) == 0);
	memcpy(g->boot_id, boot_id, sizeof(boot_id));
	copy_string(g->host_id, sizeof(g->host_id), f->host_id ? f->host_id : "");
	copy_string(g->hostname, sizeof(g->hostname), f->hostname ? f->hostname : "");
	copy_string(g->machine, sizeof(g->machine), f->machine ? f->machine : "");
}
