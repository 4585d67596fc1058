/*
 * What argv redaction costs the collector per exec, on command lines shaped
 * like those our users run: `make bench-redact` writes docs/redaction.md.
 * Each line is redacted in 15 rounds of enough calls to last ~50 ms; the
 * table gives the median and the interquartile range of the rounds.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector/redact/redact.h"

#define ROUNDS 15
#define MAX_ARGS 512

struct workload {
	const char *name;
	char *argv[MAX_ARGS];
	unsigned argc;
};

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void add(struct workload *w, char *arg)
{
	if (w->argc < MAX_ARGS)
		w->argv[w->argc++] = arg;
}

static double per_call_ns(const struct workload *w, unsigned calls)
{
	static char out[65536];
	char *out_argv[MAX_ARGS];
	double t = now_ns();

	for (unsigned i = 0; i < calls; i++)
		redact_argv(NULL, w->argv, w->argc, out, sizeof(out), out_argv);
	return (now_ns() - t) / calls;
}

static void measure(const struct workload *w)
{
	double rounds[ROUNDS];
	size_t bytes = 0;
	unsigned calls = 1;

	for (unsigned i = 0; i < w->argc; i++)
		bytes += strlen(w->argv[i]) + 1;
	while (per_call_ns(w, calls) * calls < 50e6 && calls < (1u << 24))
		calls *= 2;
	for (int r = 0; r < ROUNDS; r++)
		rounds[r] = per_call_ns(w, calls);
	qsort(rounds, ROUNDS, sizeof(rounds[0]), by_value);
	printf("| %s | %u | %zu | %.0f | %.0f .. %.0f |\n", w->name, w->argc, bytes,
	       rounds[ROUNDS / 2], rounds[ROUNDS / 4], rounds[3 * ROUNDS / 4]);
}

int main(void)
{
	static char files[300][24];
	struct workload ws[7] = {
	    {.name = "`/bin/true` (an exec storm's)"},
	    {.name = "snakemake's own command line"},
	    {.name = "a Snakemake job: `bash -c` with a bwa \\| samtools pipeline"},
	    {.name = "a 2 KiB multi-line `bash -c` script"},
	    {.name = "`cat` of 190 files (the 4 KiB the kernel side reads)"},
	    {.name = "a `python3 -c` one-liner with literals"},
	    {.name = "`bash -c` with a secret piped into `sudo -S`, and `mysql -p`"},
	};
	static char script[2100];

	add(&ws[0], "/bin/true");
	char *snakemake[] = {
	    "/usr/bin/python3", "/usr/bin/snakemake", "--cores",      "2",	    "-s",
	    "Snakefile",	"--use-conda",	      "--configfile", "config.yaml"};
	for (unsigned i = 0; i < sizeof(snakemake) / sizeof(*snakemake); i++)
		add(&ws[1], snakemake[i]);
	add(&ws[2], "/usr/bin/bash");
	add(&ws[2], "-c");
	add(&ws[2], "set -euo pipefail;  bwa mem -t 2 -R '@RG\\tID:s1\\tSM:s1' ref/genome.fa "
		    "reads/s1_R1.fastq.gz reads/s1_R2.fastq.gz | samtools sort -@ 2 -m 1G -o "
		    "mapped/s1.bam - && samtools index mapped/s1.bam 2> logs/s1.log");
	size_t used = 0;
	for (int line = 0; used + 120 < sizeof(script) - 120; line++)
		used += (size_t)snprintf(script + used, sizeof(script) - used,
					 "if [ -s out/part%03d.txt ]; then sort -k2,2 -t $'\\t' "
					 "out/part%03d.txt | uniq -c > \"sum/part%03d.tsv\"; fi\n",
					 line, line, line);
	add(&ws[3], "bash");
	add(&ws[3], "-c");
	add(&ws[3], script);
	add(&ws[4], "cat");
	for (int i = 0; i < 190; i++) {
		snprintf(files[i], sizeof(files[i]), "data/sample_%04d.txt", i);
		add(&ws[4], files[i]);
	}
	add(&ws[5], "python3");
	add(&ws[5], "-c");
	add(&ws[5],
	    "import requests; r = requests.get(url, params={'q': 'brca1', 'format': 'json'}, "
	    "timeout=30); print(r.json()['data'][0]['name'])");
	add(&ws[6], "bash");
	add(&ws[6], "-c");
	add(&ws[6], "echo hunter2 | sudo -S systemctl restart db && mysql -u app -phunter2 -e "
		    "'select 1' prod");
	printf("| command line | arguments | bytes | ns per exec (median) | IQR |\n");
	printf("|---|---|---|---|---|\n");
	for (size_t i = 0; i < sizeof(ws) / sizeof(*ws); i++)
		measure(&ws[i]);
	return 0;
}
