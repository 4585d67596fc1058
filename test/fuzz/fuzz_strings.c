/* Strings from other processes: cgroup paths, argv for tool identification,
 * and a sink's Retry-After header. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/correlate/cgroup_path.h"
#include "aggregator/correlate/tools.h"
#include "shipper/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	char *argv[32];
	unsigned argc = 0;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	struct cgroup_context cg;
	cgroup_path_parse(s, &cg);

	for (char *p = s; p < s + size && argc < 32; p += strlen(p) + 1)
		argv[argc++] = p;
	struct tool_identity t;
	tool_identify(argc ? argv[0] : NULL, argv, argc, &t);
	if (strlen(t.name) >= sizeof(t.name))
		abort();

	long ms = http_retry_after_ms((const char *)data, size);
	if (ms < -1 || ms > 86400L * 1000)
		abort();
	free(s);
	return 0;
}
