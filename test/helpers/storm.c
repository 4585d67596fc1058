/*
 * storm N WORKERS PROGRAM: WORKERS processes each fork+exec PROGRAM until N
 * have run in total; prints how many started. The exec-storm load.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	int n = atoi(argv[1]), workers = atoi(argv[2]);
	for (int w = 0; w < workers; w++) {
		if (fork() != 0)
			continue;
		int mine = n / workers + (w < n % workers);
		for (int i = 0; i < mine; i++) {
			pid_t pid = fork();
			if (pid == 0) {
				execl(argv[3], argv[3], (char *)NULL);
				_exit(127);
			}
			int st;
			waitpid(pid, &st, 0);
		}
		_exit(0);
	}
	int ok = 0, st;
	while (wait(&st) > 0)
		ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
	printf("%d\n", n);
	return ok == workers ? 0 : 1;
}
