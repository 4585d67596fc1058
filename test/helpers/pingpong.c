/*
 * pingpong tcp|pipe ROUNDS: a parent and its child pass one byte back and forth
 * ROUNDS times, over a TCP connection on 127.0.0.1 or a pair of pipes. Every
 * round puts each side to sleep once in a read: the scheduler's switch and
 * wake-up hooks run twice a round (the worst case for network-wait tracking).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int tcp_pair(int fds[2])
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);

	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		return -1;
	fds[0] = socket(AF_INET, SOCK_STREAM, 0);
	if (fds[0] < 0 || connect(fds[0], (struct sockaddr *)&a, sizeof(a)))
		return -1;
	fds[1] = accept(l, NULL, NULL);
	close(l);
	setsockopt(fds[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fds[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fds[1] < 0 ? -1 : 0;
}

/* Reads a byte from in and writes it to out, rounds times (the parent writes first). */
static int bounce(int in, int out, long rounds, int first)
{
	char c = 'x';

	for (long i = 0; i < rounds; i++) {
		if (first && write(out, &c, 1) != 1)
			return -1;
		if (read(in, &c, 1) != 1)
			return -1;
		if (!first && write(out, &c, 1) != 1)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int a[2], b[2]; /* parent -> child, child -> parent (TCP: one socket pair both ways) */
	long rounds = argc == 3 ? atol(argv[2]) : 0;
	bool tcp = argc == 3 && !strcmp(argv[1], "tcp");

	if (rounds <= 0 || (!tcp && strcmp(argv[1], "pipe"))) {
		fprintf(stderr, "usage: pingpong tcp|pipe ROUNDS\n");
		return 2;
	}
	if (tcp ? tcp_pair(a) != 0 : pipe(a) != 0 || pipe(b) != 0)
		return 1;
	int parent_in = tcp ? a[0] : b[0], parent_out = a[tcp ? 0 : 1];
	int child_in = tcp ? a[1] : a[0], child_out = tcp ? a[1] : b[1];
	pid_t child = fork();
	if (child == 0)
		_exit(bounce(child_in, child_out, rounds, 0) ? 1 : 0);
	int rc = bounce(parent_in, parent_out, rounds, 1), status = 0;
	if (waitpid(child, &status, 0) != child)
		return 1;
	return rc || !WIFEXITED(status) || WEXITSTATUS(status) ? 1 : 0;
}
