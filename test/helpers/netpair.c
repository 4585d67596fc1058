/*
 * netpair BYTES OUT: a TCP transfer of exactly BYTES over 127.0.0.1, from a
 * child (sender) to its parent (receiver). Writes both pids and the byte
 * counts each side saw returned by send()/recv() to OUT.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[65536];
	struct sockaddr_in addr = {.sin_family = AF_INET};
	socklen_t len = sizeof(addr);
	long long total, got = 0;
	int ls, st;

	if (argc != 3)
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
	for (;;) {
		ssize_t r = recv(c, buf, sizeof(buf), 0);
		if (r <= 0)
			break;
		got += r;
	}
	waitpid(child, &st, 0);
	FILE *out = fopen(argv[2], "w");
	if (!out)
		return 1;
	fprintf(out, "{\"sender\": %d, \"receiver\": %d, \"received\": %lld}\n", child, getpid(),
		got);
	fclose(out);
	return got == total && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
