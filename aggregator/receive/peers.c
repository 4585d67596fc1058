#include "aggregator/receive/peers.h"

#include <string.h>

#include "common/log.h"
#include "common/timeutil.h"

void peers_init(struct peers *p, const uint8_t key[IPC_KEY_LEN])
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	if (key) {
		memcpy(p->key, key, IPC_KEY_LEN);
		p->require_key = true;
	}
}

static struct peer *find(struct peers *p, uint32_t pipe)
{
	for (unsigned i = 0; i < p->n; i++)
		if (p->slot[i].pipe == pipe)
			return &p->slot[i];
	return NULL;
}

static void forget(struct peers *p, struct peer *e)
{
	*e = p->slot[--p->n];
}

/*
 * Counted as refused: it sent something unproven or never proved itself. Its
 * id goes to *closing, closed once the lock is released (nng may call us back).
 */
static void close_unproven(struct peers *p, struct peer *e, const char *why, uint32_t *closing)
{
	uint64_t n = __atomic_add_fetch(&p->refused, 1, __ATOMIC_RELAXED);

	if (n <= 10 || n % 1000 == 0)
		log_warn("closed connection %u: %s (%llu refused so far)", e->pipe, why,
			 (unsigned long long)n);
	*closing = e->pipe;
	forget(p, e);
}

static void close_pipes(const uint32_t *ids, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (ids[i])
			nng_pipe_close((nng_pipe){.id = ids[i]});
}

/* Returns a pipe to close (once unlocked), or 0. */
static uint32_t add(struct peers *p, uint32_t pipe)
{
	uint32_t closing = 0;

	if (find(p, pipe))
		return 0; /* its first message came before nng told us of it */
	if (p->n == PEERS_MAX) {
		/* Full of connections that proved nothing: the oldest goes. */
		struct peer *oldest = NULL;
		for (unsigned i = 0; i < p->n; i++)
			if (!p->slot[i].proven &&
			    (!oldest || p->slot[i].since_ns < oldest->since_ns))
				oldest = &p->slot[i];
		if (!oldest)
			return pipe;
		close_unproven(p, oldest, "too many connections that did not prove themselves",
			       &closing);
	}
	p->slot[p->n++] = (struct peer){.pipe = pipe, .since_ns = now_boottime_ns()};
	return closing;
}

void peers_on_pipe(nng_pipe pipe, nng_pipe_ev ev, void *arg)
{
	struct peers *p = arg;
	uint32_t id = nng_pipe_id(pipe), closing = 0;

	pthread_mutex_lock(&p->lock);
	if (ev == NNG_PIPE_EV_ADD_POST) {
		closing = add(p, id);
	} else if (ev == NNG_PIPE_EV_REM_POST) {
		struct peer *e = find(p, id);
		if (e && !e->proven && e->messages) {
			uint64_t n = __atomic_add_fetch(&p->refused, 1, __ATOMIC_RELAXED);
			log_warn("connection %u sent %u messages without the collector key and "
				 "left (%llu refused so far)",
				 id, e->messages, (unsigned long long)n);
		}
		if (e)
			forget(p, e);
	}
	pthread_mutex_unlock(&p->lock);
	close_pipes(&closing, 1);
}

enum peer_verdict peers_judge(struct peers *p, uint32_t pipe, const void *buf, size_t len)
{
	enum peer_verdict v = PEER_DROP;

	if (!p->require_key)
		return PEER_FRAME;
	pthread_mutex_lock(&p->lock);
	struct peer *e = find(p, pipe);
	uint64_t pid;
	if (!e && p->n < PEERS_MAX &&
	    nng_pipe_get_uint64((nng_pipe){.id = pipe}, NNG_OPT_IPC_PEER_PID, &pid) == 0) {
		/* A live pipe's message can come before nng's ADD_POST callback has run
		 * (one already gone left its last messages behind: dropped). */
		p->slot[p->n++] = (struct peer){.pipe = pipe, .since_ns = now_boottime_ns()};
		e = &p->slot[p->n - 1];
	}
	if (e && e->proven) {
		v = PEER_FRAME;
	} else if (e && ipc_auth_check(buf, len, p->key)) {
		e->proven = true;
		v = PEER_PROVEN_NOW;
		uint64_t peer_pid = 0, uid = 0;
		nng_pipe_get_uint64((nng_pipe){.id = pipe}, NNG_OPT_IPC_PEER_PID, &peer_pid);
		nng_pipe_get_uint64((nng_pipe){.id = pipe}, NNG_OPT_IPC_PEER_UID, &uid);
		log_info("collector connected (pid %llu, uid %llu): it holds the key",
			 (unsigned long long)peer_pid, (unsigned long long)uid);
	} else if (e) {
		/* A collector's frame queued before it reconnected may come first: its
		 * key follows, and it resends what we never acknowledged. */
		e->messages++;
	}
	pthread_mutex_unlock(&p->lock);
	return v;
}

void peers_expire(struct peers *p, uint64_t now_ns)
{
	uint32_t closing[PEERS_MAX];
	unsigned n = 0;

	pthread_mutex_lock(&p->lock);
	for (unsigned i = p->n; i-- > 0;) {
		struct peer *e = &p->slot[i];
		if (!e->proven && now_ns - e->since_ns >= IPC_AUTH_TIMEOUT_NS)
			close_unproven(p, e, "no collector key within a second", &closing[n++]);
	}
	pthread_mutex_unlock(&p->lock);
	close_pipes(closing, n);
}

unsigned peers_proven(struct peers *p, uint32_t *out, unsigned max)
{
	unsigned n = 0;

	pthread_mutex_lock(&p->lock);
	for (unsigned i = 0; i < p->n && n < max; i++)
		if (p->slot[i].proven)
			out[n++] = p->slot[i].pipe;
	pthread_mutex_unlock(&p->lock);
	return n;
}

void peers_send(nng_socket sock, uint32_t pipe, const void *buf, size_t len)
{
	nng_msg *msg;

	if (nng_msg_alloc(&msg, 0) != 0)
		return;
	if (nng_msg_append(msg, buf, len) != 0) {
		nng_msg_free(msg);
		return;
	}
	if (pipe)
		nng_msg_set_pipe(msg, (nng_pipe){.id = pipe});
	/* A lost reply only means the collector resends; we dedupe. */
	if (nng_sendmsg(sock, msg, 0) != 0)
		nng_msg_free(msg);
}

void peers_broadcast(struct peers *p, nng_socket sock, const void *buf, size_t len)
{
	uint32_t pipes[8];

	if (!p->require_key) {
		peers_send(sock, 0, buf, len);
		return;
	}
	unsigned n = peers_proven(p, pipes, 8);
	for (unsigned i = 0; i < n; i++)
		peers_send(sock, pipes[i], buf, len);
}
