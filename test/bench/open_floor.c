/*
 * open_floor OBJ: attaches the empty programs of open_floor.bpf.o and waits
 * for SIGTERM or SIGINT. A benchmark observer only (see bench.py).
 */
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	int attached = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: open_floor OBJ\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj) != 0) {
		fprintf(stderr, "open_floor: cannot load %s\n", argv[1]);
		return 1;
	}
	bpf_object__for_each_program(prog, obj)
	{
		if (bpf_program__attach(prog))
			attached++;
		else
			fprintf(stderr, "open_floor: %s did not attach\n", bpf_program__name(prog));
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	printf("attached %d\n", attached);
	fflush(stdout);
	while (!stop)
		pause();
	bpf_object__close(obj);
	return attached ? 0 : 1;
}
