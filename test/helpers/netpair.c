/*
 * netpair BYTES OUT [splice]: a TCP transfer of exactly BYTES over 127.0.0.1,
 * from a child (sender) to its parent (receiver). Writes both pids and the
 * byte counts each side saw to OUT. The receiver reads with recv(), or with
 * splice: socket to pipe to /dev/null, the bytes never reaching user memory.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static char buf[65536];

static long long receive(int c)
{
	long long got = 0;

	for (;;) {
		ssize_t r = recv(c, buf, sizeof(buf), 0);
		if (r <= 0)
			return got;
		got += r;
	}
}

static long long receive_by_splice(int c)
{
	long long got = 0;
	int pipefd[2], devnull = open("/dev/null", O_WRONLY);

	if (devnull < 0 || pipe(pipefd) != 0)
		return -1;
	for (;;) {
		ssize_t r = splice(c, NULL, pipefd[1], NULL, sizeof(buf), SPLICE_F_MOVE);
		if (r <= 0)
			return got;
		for (ssize_t left = r; left > 0;) {
			ssize_t w =
			    splice(pipefd[0], NULL, devnull, NULL, (size_t)left, SPLICE_F_MOVE);
			if (w <= 0)
				return -1;
			left -= w;
		}
		got += r;
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr = {.sin_family = AF_INET};
	socklen_t len = sizeof(addr);
	long long total, got;
	int ls, st;

	if (argc != 3 && !(argc == 4 && !strcmp(argv[3], "splice")))
		return 2;
	total = atoll(argv[1]);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (ls < 0 || bind(ls, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(ls, 1) != 0 ||
	    getsockname(ls, (struct sockaddr *)&addr, &len) != 0)
		return 1;
	pid_t child = fork();
	if (child == 0) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		long long sent = 0;
		if (connect(s, (struct sockaddr *)&addr, sizeof(addr)) != 0)
			_exit(1);
		memset(buf, 'n', sizeof(buf));
		while (sent < total) {
			size_t n = total - sent < (long long)sizeof(buf) ? (size_t)(total - sent)
									 : sizeof(buf);
			ssize_t w = send(s, buf, n, 0);
			if (w <= 0)
				_exit(1);
			sent += w;
		}
		close(s);
		_exit(0);
	}
	int c = accept(ls, NULL, NULL);
	got = argc == 4 ? receive_by_splice(c) : receive(c);
	waitpid(child, &st, 0);
	FILE *out = fopen(argv[2], "w");
	if (!out)
		return 1;
	fprintf(out, "{\"sender\": %d, \"receiver\": %d, \"received\": %lld}\n", child, getpid(),
		got);
	fclose(out);
	return got == total && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
