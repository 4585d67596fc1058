/* What a test helper that plays a collector sends first: the collector key's proof. */
#ifndef TRACER_TEST_PROVE_H
#define TRACER_TEST_PROVE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <nng/nng.h>
#include <nng/protocol/pair1/pair.h>

#include "common/ipc_auth.h"

/* how: a key file's path, "random" (a wrong key) or "none" (nothing sent); an
 * unreadable file sends nothing, so the aggregator's refusal is what is tested. */
static inline void prove_collector(nng_socket s, const char *how)
{
	uint8_t key[IPC_KEY_LEN], auth[IPC_AUTH_LEN];
	char err[512];

	if (strcmp(how, "none") == 0)
		return;
	if (strcmp(how, "random") == 0)
		getrandom(key, sizeof(key), 0);
	else if (ipc_key_load_file(how, false, key, err, sizeof(err)) != 0)
		return;
	ipc_auth_pack(key, auth);
	nng_send(s, auth, sizeof(auth), 0);
}

/* A leading "--key PATH" names the key to prove with; it is taken off argv so
 * the helper's own arguments start at argv[1] either way. */
static inline const char *take_key_option(int *argc, char ***argv, const char *dflt)
{
	if (*argc > 2 && strcmp((*argv)[1], "--key") == 0) {
		const char *key = (*argv)[2];
		*argc -= 2;
		*argv += 2;
		return key;
	}
	return dflt;
}

/* Dials the aggregator's socket at path as a collector would; name says who
 * could not connect. */
static inline int dial_aggregator(const char *name, const char *path, nng_socket *s)
{
	char url[512];

	snprintf(url, sizeof(url), "ipc://%s", path);
	if (nng_pair1_open(s) != 0 || nng_dial(*s, url, NULL, 0) != 0) {
		fprintf(stderr, "%s: cannot connect to %s\n", name, path);
		return -1;
	}
	return 0;
}

#endif
