/* What the aggregator is told at start about its peers: the key, the uids that may try. */
#include <stdio.h>
#include <unistd.h>

#include "aggregator/receive/peers.h"
#include "common/log.h"
#include "common/privdrop.h"

int peers_make_key(const char *path)
{
	uint8_t key[IPC_KEY_LEN];
	char err[512];

	if (ipc_key_load_file(path, true, key, err, sizeof(err)) != 0) {
		fprintf(stderr, "tracer-aggregator: %s\n", err);
		return 1;
	}
	return 0;
}

int peers_load_key(const char *file, int fd, uint8_t key[IPC_KEY_LEN])
{
	char err[512];
	int rc = fd >= 0 ? ipc_key_read_fd(fd, key, err, sizeof(err))
			 : ipc_key_load_file(file, geteuid() == 0, key, err, sizeof(err));

	if (rc != 0)
		log_error("%s: no collector could prove itself; refusing to start", err);
	return rc;
}

int peers_allow_users(const char *const *users, unsigned n, struct ipc_peer_policy *policy)
{
	struct run_as who;

	policy->n_allowed = 0;
	if (n)
		policy->allowed_uids[policy->n_allowed++] = 0;
	for (unsigned i = 0; i < n; i++) {
		if (run_as_lookup(users[i], &who) != 0) {
			log_error("unknown collector user '%s'", users[i]);
			return -1;
		}
		policy->allowed_uids[policy->n_allowed++] = who.uid;
	}
	return 0;
}
