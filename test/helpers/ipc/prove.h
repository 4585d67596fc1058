/* What a test helper that plays a collector sends first: the collector key's proof. */
#ifndef TRACER_TEST_PROVE_H
#define TRACER_TEST_PROVE_H

#include <stdint.h>
#include <string.h>
#include <sys/random.h>

#include <nng/nng.h>

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

#endif
