/*
 * pathbench N: the aggregator's work for one file event's path, N times over
 * a set of paths as programs open them (relative to a cwd, with ./ and ../,
 * absolute): join with the cwd, make valid UTF-8, normalise. Prints the ns
 * per path. The aggregator's own code, compiled in (docs/paths.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aggregator/ingest/path.h"
#include "common/jsonutil.h"

static const char *const cwds[] = {"/home/ana/projects/rnaseq/work/3f/9a1c2e",
				   "/scratch/run42/results", "/"};
static const char *const opened[] = {
    "reads_R1.fastq.gz",
    "./ref/genome.fa",
    "../../inputs/sample_7.bam",
    "/etc/ld.so.cache",
    "out/./tmp/../aln.sorted.bam",
    "a/b/c/d/e/f/g/h.txt",
    "/usr/lib/python3/dist-packages/numpy/__init__.py",
};

int main(int argc, char **argv)
{
	struct timespec a, b;
	size_t n_cwd = sizeof(cwds) / sizeof(cwds[0]), n_open = sizeof(opened) / sizeof(opened[0]);
	size_t total_len = 0;

	if (argc != 2)
		return 2;
	long n = atol(argv[1]);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		const char *cwd = cwds[(size_t)i % n_cwd], *path = opened[(size_t)i % n_open];
		char joined[4096];
		int len = path[0] == '/' ? snprintf(joined, sizeof(joined), "%s", path)
					 : snprintf(joined, sizeof(joined), "%s/%s", cwd, path);
		char *clean = utf8_sanitize(joined, (size_t)len);
		if (!clean)
			return 1;
		path_normalize(clean);
		total_len += strlen(clean);
		free(clean);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	printf("%.1f %zu\n", s * 1e9 / (double)n, total_len);
	return 0;
}
