#include "cli/cost/prices.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileutil.h"
#include "common/vec.h"

int prices_load(struct price_table *t, const char *path, char *err, size_t err_size)
{
	char buf[4096], line[1024];
	size_t cap = 0;
	int lineno = 0;

	memset(t, 0, sizeof(*t));
	if (!path &&
	    !(path = path_find_shipped("/etc/tracer/prices.tsv", "prices.tsv", buf, sizeof(buf)))) {
		snprintf(err, err_size,
			 "no price table (/etc/tracer/prices.tsv); pass --prices FILE");
		return -1;
	}
	FILE *f = fopen(path, "re");
	if (!f) {
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return -1;
	}
	snprintf(t->path, sizeof(t->path), "%.500s", path);
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strncmp(line, "# source: ", 10) && !t->source[0]) {
			snprintf(t->source, sizeof(t->source), "%.500s", line + 10);
			t->source[strcspn(t->source, "\n")] = '\0';
		}
		if (line[0] == '#' || line[0] == '\n')
			continue;
		struct price p = {0};
		char arch[16] = "";
		int fields = sscanf(line, "%7s %31s %47s %15s %lf %d %lf %15s %15s", p.provider,
				    p.region, p.type, p.lifecycle, &p.usd_per_hour, &p.vcpu,
				    &p.memory_gib, p.cls, arch);
		/* Format 1 had no arch column: a table kept from an older install
		 * (a conffile) gets AWS's naming rule. */
		const char *a = fields == 9		     ? prices_arch(arch)
				: !strcmp(p.provider, "aws") ? prices_aws_type_arch(p.type)
							     : NULL;
		if (fields < 8 || p.usd_per_hour <= 0 || p.vcpu <= 0 || p.memory_gib <= 0 || !a) {
			snprintf(err, err_size,
				 "%s:%d: expected provider region type lifecycle "
				 "usd_per_hour vcpu memory_gib class arch (x86_64 or arm64)",
				 path, lineno);
			fclose(f);
			prices_free(t);
			return -1;
		}
		snprintf(p.arch, sizeof(p.arch), "%s", a);
		if (!vec_grow(t->rows, cap, t->n + 1)) {
			snprintf(err, err_size, "out of memory");
			fclose(f);
			prices_free(t);
			return -1;
		}
		t->rows[t->n++] = p;
	}
	fclose(f);
	return 0;
}

void prices_free(struct price_table *t)
{
	free(t->rows);
	t->rows = NULL;
	t->n = 0;
}

const struct price *prices_find(const struct price_table *t, const char *region, const char *type,
				const char *lifecycle)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->rows[i].type, type) && !strcmp(t->rows[i].lifecycle, lifecycle) &&
		    (!region || !*region || !strcmp(t->rows[i].region, region)))
			return &t->rows[i];
	return NULL;
}

const struct price *prices_cheapest_fit(const struct price_table *t, const char *region,
					const char *lifecycle, int vcpu, double memory_gib,
					const char *cls, const char *arch)
{
	const struct price *best = NULL;

	for (size_t i = 0; i < t->n; i++) {
		const struct price *p = &t->rows[i];
		if (strcmp(p->lifecycle, lifecycle) ||
		    (region && *region && strcmp(p->region, region)))
			continue;
		if (cls ? strcmp(p->cls, cls) != 0
			: (!strcmp(p->cls, "gpu") || !strcmp(p->cls, "burstable")))
			continue;
		if (arch && strcmp(p->arch, arch))
			continue;
		if (p->vcpu < vcpu || p->memory_gib < memory_gib)
			continue;
		if (!best || p->usd_per_hour < best->usd_per_hour)
			best = p;
	}
	return best;
}

const char *prices_arch(const char *machine)
{
	if (!strcmp(machine, "x86_64") || !strcmp(machine, "amd64"))
		return "x86_64";
	if (!strcmp(machine, "aarch64") || !strcmp(machine, "arm64"))
		return "arm64";
	return NULL;
}

const char *prices_aws_type_arch(const char *type)
{
	size_t letters = strspn(type, "abcdefghijklmnopqrstuvwxyz");
	size_t digits = strspn(type + letters, "0123456789");

	if (!strncmp(type, "a1.", 3))
		return "arm64";
	return letters && digits && type[letters + digits] == 'g' ? "arm64" : "x86_64";
}
