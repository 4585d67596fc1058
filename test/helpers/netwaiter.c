/*
 * netwaiter MODE ARG OUT: waits in one known way and writes to OUT its pid
 * and, by its own clock (CLOCK_MONOTONIC around each blocking call), how long
 * it was blocked. The ground truth for the network-wait tests.
 *   tcp HOST PORT    connect, send a line, recv() until EOF
 *   poll HOST PORT   the same, waiting in poll() before each recv
 *   epoll HOST PORT  the same, waiting in epoll_wait()
 *   udp HOST PORT    send a datagram, recvfrom() the answer
 *   sleep MS -       nanosleep for MS milliseconds (not network)
 *   pipe MS -        read a pipe whose child writes a byte every 100 ms for MS (not network)
 *   file PATH -      read PATH to its end (not network)
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char buf[65536];
static long long blocked_ns, bytes;

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int connect_to(const char *host, const char *port, int type)
{
	struct addrinfo hints = {.ai_socktype = type, .ai_flags = AI_NUMERICHOST}, *ai;
	int s;

	if (getaddrinfo(host, port, &hints, &ai) != 0)
		return -1;
	s = socket(ai->ai_family, type, 0);
	long long t0 = now_ns();
	if (s < 0 || connect(s, ai->ai_addr, ai->ai_addrlen) != 0)
		return -1;
	blocked_ns += now_ns() - t0;
	freeaddrinfo(ai);
	return s;
}

/* Before each read: wait for the socket in poll or epoll_wait (by mode). */
static int wait_readable(int s, const char *mode, int ep)
{
	long long t0 = now_ns();
	int r = 0;

	if (!strcmp(mode, "poll")) {
		struct pollfd p = {.fd = s, .events = POLLIN};
		r = poll(&p, 1, -1);
	} else if (!strcmp(mode, "epoll")) {
		struct epoll_event ev;
		r = epoll_wait(ep, &ev, 1, -1);
	}
	blocked_ns += now_ns() - t0;
	return r < 0 ? -1 : 0;
}

static int tcp_client(const char *mode, const char *host, const char *port)
{
	int s = connect_to(host, port, SOCK_STREAM), ep = -1;

	if (s < 0)
		return -1;
	if (!strcmp(mode, "epoll")) {
		struct epoll_event ev = {.events = EPOLLIN, .data.fd = s};
		ep = epoll_create1(0);
		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev) != 0)
			return -1;
	}
	if (send(s, "GET\n", 4, 0) != 4)
		return -1;
	for (;;) {
		if (wait_readable(s, mode, ep) != 0)
			return -1;
		long long t0 = now_ns();
		ssize_t r = recv(s, buf, sizeof(buf), 0);
		blocked_ns += now_ns() - t0;
		if (r < 0)
			return -1;
		if (r == 0)
			return 0;
		bytes += r;
	}
}

static int udp_client(const char *host, const char *port)
{
	int s = connect_to(host, port, SOCK_DGRAM);

	if (s < 0 || send(s, "GET\n", 4, 0) != 4)
		return -1;
	long long t0 = now_ns();
	ssize_t r = recvfrom(s, buf, sizeof(buf), 0, NULL, NULL);
	blocked_ns += now_ns() - t0;
	bytes = r;
	return r < 0 ? -1 : 0;
}

static int pipe_reader(int ms)
{
	int fd[2];

	if (pipe(fd) != 0)
		return -1;
	pid_t child = fork();
	if (child == 0) {
		struct timespec gap = {0, 100000000L};
		for (int i = 0; i < ms / 100; i++) {
			nanosleep(&gap, NULL);
			if (write(fd[1], "x", 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(fd[1]);
	for (;;) {
		long long t0 = now_ns();
		ssize_t r = read(fd[0], buf, sizeof(buf));
		blocked_ns += now_ns() - t0;
		if (r <= 0)
			break;
		bytes += r;
	}
	return waitpid(child, NULL, 0) == child ? 0 : -1;
}

static int file_reader(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECT);

	if (fd < 0)
		fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	static char aligned[1 << 20] __attribute__((aligned(4096)));
	for (;;) {
		long long t0 = now_ns();
		ssize_t r = read(fd, aligned, sizeof(aligned));
		blocked_ns += now_ns() - t0;
		if (r <= 0)
			return r < 0 ? -1 : 0;
		bytes += r;
	}
}

static int run(const char *mode, const char *a, const char *b)
{
	if (!strcmp(mode, "tcp") || !strcmp(mode, "poll") || !strcmp(mode, "epoll"))
		return tcp_client(mode, a, b);
	if (!strcmp(mode, "udp"))
		return udp_client(a, b);
	if (!strcmp(mode, "sleep")) {
		int ms = atoi(a);
		struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
		long long t0 = now_ns();
		nanosleep(&t, NULL);
		blocked_ns = now_ns() - t0;
		return 0;
	}
	if (!strcmp(mode, "pipe"))
		return pipe_reader(atoi(a));
	if (!strcmp(mode, "file"))
		return file_reader(a);
	return -1;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: netwaiter MODE ARG ARG OUT\n");
		return 2;
	}
	if (run(argv[1], argv[2], argv[3]) != 0) {
		perror(argv[1]);
		return 1;
	}
	FILE *f = fopen(argv[4], "w");
	if (!f)
		return 1;
	fprintf(f, "{\"pid\": %d, \"blocked_ns\": %lld, \"bytes\": %lld}\n", getpid(), blocked_ns,
		bytes);
	return fclose(f) == 0 ? 0 : 1;
}
