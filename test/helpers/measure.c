/*
 * measure OUT.json [--heap MIB] -- CMD ARGS...
 * Runs CMD as its child and writes the kernel's own account of it (wait4's
 * rusage and status) to OUT.json: the ground truth the integration tests
 * compare tracer against. --heap first touches MIB of memory in this parent,
 * to show that the child's ru_maxrss inherits it while its real peak does not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static long long tv_ns(struct timeval tv)
{
	return (long long)tv.tv_sec * 1000000000LL + (long long)tv.tv_usec * 1000LL;
}

int main(int argc, char **argv)
{
	int i = 2;
	size_t heap_mib = 0;
	char *heap = NULL;

	if (argc < 4) {
		fprintf(stderr, "usage: measure OUT.json [--heap MIB] -- CMD ARGS...\n");
		return 2;
	}
	if (strcmp(argv[i], "--heap") == 0) {
		heap_mib = strtoul(argv[i + 1], NULL, 10);
		i += 2;
	}
	if (strcmp(argv[i], "--") == 0)
		i++;
	if (heap_mib) {
		heap = malloc(heap_mib << 20);
		memset(heap, 1, heap_mib << 20);
	}
	pid_t pid = fork();
	if (pid == 0) {
		execvp(argv[i], argv + i);
		perror("exec");
		_exit(127);
	}
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) != pid)
		return 1;
	FILE *f = fopen(argv[1], "w");
	if (!f)
		return 1;
	fprintf(
	    f,
	    "{\"pid\": %d, \"exited\": %d, \"code\": %d, \"signal\": %d, \"utime_ns\": %lld, "
	    "\"stime_ns\": %lld, \"maxrss_kb\": %ld, \"minflt\": %ld, \"majflt\": %ld, "
	    "\"nvcsw\": %ld, \"nivcsw\": %ld, \"inblock\": %ld, \"oublock\": %ld, \"heap\": %d}\n",
	    pid, WIFEXITED(status), WIFEXITED(status) ? WEXITSTATUS(status) : -1,
	    WIFSIGNALED(status) ? WTERMSIG(status) : 0, tv_ns(ru.ru_utime), tv_ns(ru.ru_stime),
	    ru.ru_maxrss, ru.ru_minflt, ru.ru_majflt, ru.ru_nvcsw, ru.ru_nivcsw, ru.ru_inblock,
	    ru.ru_oublock, heap ? heap[12345] : 0);
	fclose(f);
	free(heap);
	return 0;
}
