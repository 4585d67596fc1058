#include "common/ipc.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <nng/protocol/pair1/pair.h>

#include "common/frame.h"
#include "common/log.h"
#include "common/paths.h"

size_t ipc_ack_pack(const struct ipc_ack *ack, uint8_t out[IPC_RESEND_LEN])
{
	memcpy(out, ack->stream_id, 16);
	for (int i = 0; i < 8; i++)
		out[16 + i] = (uint8_t)(ack->seq >> (8 * i));
	if (!ack->resend)
		return IPC_ACK_LEN;
	out[IPC_ACK_LEN] = 1;
	return IPC_RESEND_LEN;
}

int ipc_ack_unpack(const void *buf, size_t len, struct ipc_ack *ack)
{
	const uint8_t *b = buf;

	if (len != IPC_ACK_LEN && !(len == IPC_RESEND_LEN && b[IPC_ACK_LEN] == 1))
		return -1;
	ack->resend = len == IPC_RESEND_LEN;
	memcpy(ack->stream_id, b, 16);
	ack->seq = 0;
	for (int i = 0; i < 8; i++)
		ack->seq |= (uint64_t)b[16 + i] << (8 * i);
	return 0;
}

bool ipc_ack_is_heartbeat(const struct ipc_ack *ack)
{
	static const uint8_t zero[16];

	return memcmp(ack->stream_id, zero, sizeof(zero)) == 0;
}

static void check_peer(nng_pipe pipe, nng_pipe_ev ev, void *arg)
{
	struct ipc_peer_policy *policy = arg;
	uint64_t uid = UINT64_MAX, pid = 0;

	if (ev != NNG_PIPE_EV_ADD_PRE)
		return;
	/* The listener check (ipc_listener_check): proof of admission, then hang up. */
	if (nng_pipe_get_uint64(pipe, NNG_OPT_IPC_PEER_PID, &pid) == 0 && policy->self_pid &&
	    pid == (uint64_t)policy->self_pid) {
		__atomic_add_fetch(&policy->self_checks, 1, __ATOMIC_RELEASE);
		nng_pipe_close(pipe);
		return;
	}
	if (nng_pipe_get_uint64(pipe, NNG_OPT_IPC_PEER_UID, &uid) == 0) {
		for (unsigned i = 0; i <= policy->n_allowed; i++) {
			/* With no uid named, any may try: the key decides (ipc_auth.h). */
			if (i == policy->n_allowed ? policy->n_allowed == 0
						   : uid == policy->allowed_uids[i]) {
				__atomic_add_fetch(&policy->accepted, 1, __ATOMIC_RELAXED);
				return;
			}
		}
	}
	nng_pipe_get_uint64(pipe, NNG_OPT_IPC_PEER_PID, &pid);
	__atomic_add_fetch(&policy->refused, 1, __ATOMIC_RELAXED);
	log_warn("refused connection from uid %lld pid %llu: not an allowed collector",
		 uid == UINT64_MAX ? -1LL : (long long)uid, (unsigned long long)pid);
	nng_pipe_close(pipe);
}

static void tell_policy(nng_pipe pipe, nng_pipe_ev ev, void *arg)
{
	struct ipc_peer_policy *policy = arg;

	if (policy->on_pipe)
		policy->on_pipe(pipe, ev, policy->on_pipe_arg);
}

static int start_listener(struct ipc_server *srv)
{
	char url[4200];
	int rv;

	if (socket_url(srv->path, url, sizeof(url)) != 0)
		return NNG_EINVAL;
	if ((rv = nng_listener_create(&srv->listener, srv->sock, url)) != 0)
		return rv;
	if ((rv = nng_listener_set_int(srv->listener, NNG_OPT_IPC_PERMISSIONS, srv->mode)) != 0)
		return rv;
	return nng_listener_start(srv->listener, 0);
}

/* A send or receive queue of nng's (NNG_OPT_SENDBUF, NNG_OPT_RECVBUF). */
static void set_queue(nng_socket sock, const char *option, const char *what, int messages)
{
	int rv = nng_socket_set_int(sock, option, messages);

	if (rv != 0)
		log_warn("cannot set a %s queue of %d messages: %s", what, messages,
			 nng_strerror(rv));
}

/*
 * nng 1.5.2's pair1 keeps no receive queue by default: a message that arrives
 * while no receive is waiting is parked on its pipe ("read ready"). If that
 * pipe closes in the same instant, the flag can outlive the pipe, and the next
 * nng_recvmsg() dereferences the missing pipe (a SIGSEGV in the collector's
 * take_acks when the aggregator restarted under load). With a queue, arriving
 * messages go there instead; the flag is only set once the queue is full,
 * which our readers, draining every loop, do not let happen.
 */
static void set_receive_queue(nng_socket sock, int messages)
{
	set_queue(sock, NNG_OPT_RECVBUF, "receive", messages);
}

int ipc_listen(struct ipc_server *srv, const char *path, int mode, struct ipc_peer_policy *policy)
{
	int rv;

	if (strlen(path) >= sizeof(srv->path))
		return NNG_EINVAL;
	snprintf(srv->path, sizeof(srv->path), "%s", path);
	srv->mode = mode;
	srv->policy = policy;
	srv->probe_fd = -1;
	policy->self_pid = getpid();
	if ((rv = nng_pair1_open_poly(&srv->sock)) != 0)
		return rv;
	/* Frames up to four times the limit reach the decoder, which counts them
	 * as too big; nng closes a pipe that sends more, uncounted. Our collector
	 * flushes at 1 MiB. */
	nng_socket_set_size(srv->sock, NNG_OPT_RECVMAXSZ, 4 * (size_t)FRAME_MAX_BYTES);
	set_receive_queue(srv->sock, IPC_SERVER_RECV_QUEUE);
	/* Acks wait briefly for the pipe (one sent right after another would be
	 * dropped without waiting); never long: a lost ack only means a resend. */
	nng_socket_set_ms(srv->sock, NNG_OPT_SENDTIMEO, IPC_SEND_TIMEOUT_MS);
	if ((rv = nng_pipe_notify(srv->sock, NNG_PIPE_EV_ADD_PRE, check_peer, policy)) != 0 ||
	    (rv = nng_pipe_notify(srv->sock, NNG_PIPE_EV_ADD_POST, tell_policy, policy)) != 0 ||
	    (rv = nng_pipe_notify(srv->sock, NNG_PIPE_EV_REM_POST, tell_policy, policy)) != 0)
		goto fail;
	/* A stale socket file from a crash would make bind fail. */
	if (!ipc_probe(path))
		unlink(path);
	if ((rv = start_listener(srv)) != 0)
		goto fail;
	return 0;
fail:
	nng_close(srv->sock);
	return rv;
}

/* Connects to path and sends the pair1 SP header; the fd stays open. -1 on failure. */
static int open_probe(const char *path)
{
	static const uint8_t hello[8] = {0, 'S', 'P', 0, 0, 0x11, 0, 0};
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -1;
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    send(fd, hello, sizeof(hello), MSG_NOSIGNAL) != (ssize_t)sizeof(hello)) {
		close(fd);
		return -1;
	}
	return fd;
}

int ipc_listener_check(struct ipc_server *srv, uint64_t now_ns)
{
	uint64_t seen = __atomic_load_n(&srv->policy->self_checks, __ATOMIC_ACQUIRE);

	if (srv->probe_fd >= 0) {
		if (seen != srv->checks_seen) {
			/* Admitted: the handshake is done, hanging up is harmless. */
			close(srv->probe_fd);
			srv->probe_fd = -1;
		} else if (now_ns - srv->probe_since_ns < IPC_ADMISSION_GRACE_NS) {
			return 0; /* still in the listener's hands; give it time */
		} else {
			srv->restarts++;
			log_warn("the IPC listener stopped admitting connections (nng#1518: a peer "
				 "hung up mid-handshake); rebuilding it (%llu so far)",
				 (unsigned long long)srv->restarts);
			close(srv->probe_fd);
			srv->probe_fd = -1;
			nng_listener_close(srv->listener);
			unlink(srv->path);
			int rv = start_listener(srv);
			if (rv != 0)
				log_error("cannot listen on %s again: %s", srv->path,
					  nng_strerror(rv));
			srv->checks_seen = seen;
			return 1;
		}
	}
	srv->checks_seen = seen;
	srv->probe_fd = open_probe(srv->path);
	srv->probe_since_ns = now_ns;
	return 0;
}

/* Shared with the closing thread, which may outlive ipc_server_close_within. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t done_cv;
	bool done;
	nng_socket sock;
} closing = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, NNG_SOCKET_INITIALIZER};

static void *close_socket(void *unused)
{
	(void)unused;
	nng_close(closing.sock);
	pthread_mutex_lock(&closing.lock);
	closing.done = true;
	pthread_cond_signal(&closing.done_cv);
	pthread_mutex_unlock(&closing.lock);
	return NULL;
}

int ipc_close_within(nng_socket sock, unsigned timeout_ms)
{
	pthread_t thread;
	struct timespec until;
	int rv = 0;

	closing.sock = sock;
	closing.done = false;
	if (pthread_create(&thread, NULL, close_socket, NULL) != 0) {
		close_socket(NULL);
		return 0;
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&closing.lock);
	while (!closing.done && rv == 0)
		rv = pthread_cond_timedwait(&closing.done_cv, &closing.lock, &until);
	rv = closing.done ? 0 : -1;
	pthread_mutex_unlock(&closing.lock);
	if (rv == 0)
		pthread_join(thread, NULL);
	else
		pthread_detach(thread);
	return rv;
}

int ipc_server_close_within(struct ipc_server *srv, unsigned timeout_ms)
{
	int rv = ipc_close_within(srv->sock, timeout_ms);

	/* Our probe goes last: a hang-up mid-handshake is what upsets nng 1.5. */
	if (srv->probe_fd >= 0)
		close(srv->probe_fd);
	srv->probe_fd = -1;
	return rv;
}

static int start_dialer(struct ipc_client *c, int flags)
{
	char url[4200];
	int rv;

	if (socket_url(c->path, url, sizeof(url)) != 0)
		return NNG_EINVAL;
	if ((rv = nng_dialer_create(&c->dialer, c->sock, url)) != 0)
		return rv;
	nng_dialer_set_ms(c->dialer, NNG_OPT_RECONNMINT, 50);
	nng_dialer_set_ms(c->dialer, NNG_OPT_RECONNMAXT, 1000);
	rv = nng_dialer_start(c->dialer, flags);
	if (rv != 0)
		nng_dialer_close(c->dialer);
	return rv;
}

int ipc_dial(struct ipc_client *c, const char *path, nng_pipe_cb on_pipe, void *arg)
{
	int rv;

	if (strlen(path) >= sizeof(c->path))
		return NNG_EINVAL;
	snprintf(c->path, sizeof(c->path), "%s", path);
	if ((rv = nng_pair1_open(&c->sock)) != 0)
		return rv;
	nng_socket_set_size(c->sock, NNG_OPT_RECVMAXSZ, 4096);
	set_receive_queue(c->sock, IPC_CLIENT_RECV_QUEUE);
	set_queue(c->sock, NNG_OPT_SENDBUF, "send", IPC_CLIENT_SEND_QUEUE);
	if (on_pipe) {
		nng_pipe_notify(c->sock, NNG_PIPE_EV_ADD_PRE, on_pipe, arg);
		nng_pipe_notify(c->sock, NNG_PIPE_EV_ADD_POST, on_pipe, arg);
		nng_pipe_notify(c->sock, NNG_PIPE_EV_REM_POST, on_pipe, arg);
	}
	/*
	 * Connect now if the peer is there: a caller about to drop privileges
	 * wants the connection made with its current credentials. Otherwise keep
	 * trying in the background.
	 */
	if (start_dialer(c, 0) == 0)
		return 0;
	if ((rv = start_dialer(c, NNG_FLAG_NONBLOCK)) != 0)
		nng_close(c->sock);
	return rv;
}

int ipc_redial(struct ipc_client *c)
{
	nng_dialer_close(c->dialer);
	return start_dialer(c, NNG_FLAG_NONBLOCK);
}

bool ipc_probe(const char *path)
{
	/* The SP header a pair1 peer sends: 0, 'S', 'P', 0, protocol (16 bits), 0, 0. */
	static const uint8_t hello[8] = {0, 'S', 'P', 0, 0, 0x11, 0, 0};
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	uint8_t reply[8];
	int fd;
	bool ok;

	if (strlen(path) >= sizeof(addr.sun_path))
		return false;
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	ok = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0;
	if (ok && send(fd, hello, sizeof(hello), MSG_NOSIGNAL) == (ssize_t)sizeof(hello)) {
		/* Wait (briefly) for the listener's header: the handshake is then done on
		 * both sides and hanging up is an ordinary disconnect. */
		struct pollfd p = {.fd = fd, .events = POLLIN};
		size_t got = 0;
		while (got < sizeof(reply) && poll(&p, 1, 1000) == 1) {
			ssize_t n = recv(fd, reply + got, sizeof(reply) - got, 0);
			if (n <= 0)
				break;
			got += (size_t)n;
		}
	}
	close(fd);
	return ok;
}
