/*
 * The site's cost settings (/etc/tracer/cost.conf, docs/cost.md): what this
 * host costs, or which instance it is, and whether a cloud's metadata service
 * may be asked. Command-line options override every key.
 */
#ifndef TRACER_CLI_COSTCONF_H
#define TRACER_CLI_COSTCONF_H

#include <stdbool.h>
#include <stddef.h>

#define COST_CONF_PATH "/etc/tracer/cost.conf"
#define DMI_DIR "/sys/class/dmi/id"

enum cost_detect {
	DETECT_AUTO, /* only where the firmware names a cloud we can ask */
	DETECT_YES,
	DETECT_NO,
};

struct cost_conf {
	char path[512]; /* what was read; "" when there was no file */
	char rate[32], instance_type[64], region[32], lifecycle[16];
	enum cost_detect detect;
};

/*
 * Reads path (NULL: COST_CONF_PATH, where a missing file means defaults).
 * 0, or -1 with the reason, naming the line, in err.
 */
int cost_conf_load(struct cost_conf *c, const char *path, char *err, size_t err_size);

/*
 * The cloud the machine's firmware names (sys_vendor, product_name,
 * bios_vendor and bios_version under dmi_dir): "aws", "gcp", or NULL for a
 * machine that is no instance we know how to ask (on-prem, a laptop, a
 * container without /sys/class/dmi). Reads no network.
 */
const char *cost_firmware_cloud(const char *dmi_dir);

#endif
