/* Files users edit: the collector's config, the tool allow/deny lists, the
 * shipper's credentials file. Written to a private temporary file and loaded
 * with the real loaders: a clear error or a result, never a crash. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aggregator/correlate/tools.h"
#include "collector/setup/config.h"
#include "shipper/credentials.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/tracer-fuzz-XXXXXX";
	char err[512];
	int fd = mkstemp(path);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return 0;
	}
	fchmod(fd, 0600);
	close(fd);

	struct collector_config c;
	collector_config_defaults(&c);
	collector_config_load(&c, path, err, sizeof(err));

	struct tool_lists lists = {0};
	if (tool_lists_load(&lists, path, path, err, sizeof(err)) == 0) {
		tool_category(&lists, "samtools");
		tool_denied(&lists, "sshd");
	}
	tool_lists_free(&lists);

	struct credentials cred;
	if (credentials_load(path, &cred, err, sizeof(err)) == 0)
		credentials_wipe(&cred);
	unlink(path);
	return 0;
}
