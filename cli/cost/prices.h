/* The price table (docs/cost.md): prices and shapes of instance types. */
#ifndef TRACER_PRICES_H
#define TRACER_PRICES_H

#include <stdbool.h>
#include <stddef.h>

struct price {
	char provider[8], region[32], type[48], lifecycle[16], cls[16];
	double usd_per_hour, memory_gib;
	int vcpu;
	char arch[8]; /* "x86_64" or "arm64" */
};

struct price_table {
	struct price *rows;
	size_t n;
	char path[512];
	char source[512]; /* the table's first `# source:` line */
};

/* path NULL: /etc/tracer/prices.tsv, then deploy/etc beside the binary. -1 with err. */
int prices_load(struct price_table *t, const char *path, char *err, size_t err_size);
void prices_free(struct price_table *t);
const struct price *prices_find(const struct price_table *t, const char *region, const char *type,
				const char *lifecycle);
/*
 * The cheapest type in region/lifecycle with at least vcpu and memory_gib, of a
 * class (NULL: any but gpu and burstable) and an architecture (NULL: any).
 * NULL if nothing fits.
 */
const struct price *prices_cheapest_fit(const struct price_table *t, const char *region,
					const char *lifecycle, int vcpu, double memory_gib,
					const char *cls, const char *arch);
/*
 * The price table's name for a `uname -m` (aarch64 and arm64 are "arm64",
 * x86_64 and amd64 "x86_64"); NULL for anything else.
 */
const char *prices_arch(const char *machine);
/* AWS's naming rule for a type's architecture: Graviton families carry a "g"
 * right after the generation (c7g, m6gd, t4g, im4gn), and a1; "x86_64" else. */
const char *prices_aws_type_arch(const char *type);

#endif
