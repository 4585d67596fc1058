/* The hosts of the fleet store and whether each still reports (fleet_idle.c). */
#ifndef TRACER_FLEET_IDLE_H
#define TRACER_FLEET_IDLE_H

#include <jansson.h>

/* Every host with its last word ([{host, hostname, last_heard_ns, silent, state}]);
 * NULL said why. */
json_t *fleet_idle_verdicts(void);
/* Those as a table. */
void fleet_idle_print_hosts(json_t *hosts);

#endif
