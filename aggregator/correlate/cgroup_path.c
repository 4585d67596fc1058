#include "aggregator/correlate/cgroup_path.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool ends(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);
	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

/* A container id: 64 hex, or ECS Fargate's <32 hex>-<digits>. */
static bool container_id(const char *s, size_t len)
{
	if (len == 64 && all_hex(s, 64))
		return true;
	if (len > 33 && all_hex(s, 32) && s[32] == '-') {
		for (size_t i = 33; i < len; i++)
			if (!isdigit((unsigned char)s[i]))
				return false;
		return true;
	}
	return false;
}

/* Slurm 26.05+ SLUID: 's' + 13 Crockford base32 characters. */
static bool sluid(const char *s, size_t len)
{
	static const char alphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
	if (len != 14 || s[0] != 's')
		return false;
	for (size_t i = 1; i < len; i++)
		if (!strchr(alphabet, s[i]))
			return false;
	return true;
}

static void copy(char *dst, size_t size, const char *src, size_t len)
{
	if (len >= size)
		len = size - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* "kubepods-besteffort-pod1234_5678.slice" or "pod1234-5678" -> "1234-5678" */
static void pod_uid(const char *comp, size_t len, struct cgroup_context *out)
{
	const char *pod = NULL;

	for (size_t i = 0; i + 3 <= len; i++)
		if (!strncmp(comp + i, "pod", 3) && (i == 0 || comp[i - 1] == '-'))
			pod = comp + i + 3;
	if (!pod)
		return;
	size_t n = len - (size_t)(pod - comp);
	if (ends(pod, n, ".slice"))
		n -= 6;
	copy(out->pod_uid, sizeof(out->pod_uid), pod, n);
	for (char *c = out->pod_uid; *c; c++)
		if (*c == '_')
			*c = '-';
}

static const struct {
	const char *prefix;
	const char *runtime;
} scope_prefixes[] = {
    {"docker-", "docker"},
    {"cri-containerd-", "containerd"},
    {"crio-", "cri-o"},
    {"libpod-", "podman"},
};

void cgroup_path_parse(const char *path, struct cgroup_context *out)
{
	char prev[128] = "";
	bool kube = false, ecs = false, slurm = false;

	memset(out, 0, sizeof(*out));
	if (!path)
		return;
	for (const char *p = path; *p;) {
		while (*p == '/')
			p++;
		const char *comp = p;
		while (*p && *p != '/')
			p++;
		size_t len = (size_t)(p - comp);
		if (len == 0)
			break;
		size_t base_len = ends(comp, len, ".scope") ? len - 6 : len;

		if (starts(comp, "kubepods"))
			kube = true;
		if (kube && (starts(comp, "pod") || strstr(comp, "-pod")) && len < 128)
			pod_uid(comp, len, out);
		if (!strncmp(comp, "ecs", len) || starts(comp, "ecstasks-")) {
			ecs = true;
			if (starts(comp, "ecstasks-")) {
				size_t n = len - 9 - (ends(comp, len, ".slice") ? 6 : 0);
				copy(out->ecs_task, sizeof(out->ecs_task), comp + 9, n);
			}
		} else if (ecs && !out->ecs_task[0] && !container_id(comp, len)) {
			copy(out->ecs_task, sizeof(out->ecs_task), comp, len);
		}

		/* Container scopes: docker-<id>.scope, cri-containerd-<id>.scope ... */
		bool matched = false;
		for (size_t i = 0; i < sizeof(scope_prefixes) / sizeof(*scope_prefixes); i++) {
			size_t pl = strlen(scope_prefixes[i].prefix);
			if (base_len > pl && !strncmp(comp, scope_prefixes[i].prefix, pl) &&
			    !strstr(comp, "-conmon-") && container_id(comp + pl, base_len - pl)) {
				copy(out->container_id, sizeof(out->container_id), comp + pl,
				     base_len - pl);
				snprintf(out->runtime, sizeof(out->runtime), "%s",
					 ecs ? "ecs" : scope_prefixes[i].runtime);
				matched = true;
			}
		}
		/* Bare ids: /docker/<id>, /kubepods/.../<id>, /ecs/<task>/<id>,
		 * /libpod_parent/libpod-<id> */
		if (!matched && container_id(comp, len)) {
			copy(out->container_id, sizeof(out->container_id), comp, len);
			snprintf(out->runtime, sizeof(out->runtime), "%s",
				 ecs			   ? "ecs"
				 : kube			   ? "containerd"
				 : !strcmp(prev, "docker") ? "docker"
							   : "");
		}

		/* Slurm v1: /slurm[_node]/uid_N/job_N/step_S; v2: slurmstepd.scope/job_N/step_S */
		if (!strcmp(prev, "slurm") || starts(prev, "slurm_") ||
		    ends(prev, strlen(prev), "slurmstepd.scope"))
			slurm = true;
		if (!strncmp(comp, "slurm", len) || starts(comp, "slurm_") ||
		    ends(comp, len, "slurmstepd.scope"))
			slurm = true;
		if (slurm && starts(comp, "job_"))
			copy(out->slurm_job, sizeof(out->slurm_job), comp + 4, len - 4);
		else if (slurm && sluid(comp, len))
			copy(out->slurm_job, sizeof(out->slurm_job), comp, len);
		if (slurm && starts(comp, "step_"))
			copy(out->slurm_step, sizeof(out->slurm_step), comp + 5, len - 5);

		/* systemd units: the innermost .service or .scope that is not a container. */
		if ((ends(comp, len, ".service") || (ends(comp, len, ".scope") && !matched)) &&
		    !strstr(comp, "-conmon-"))
			copy(out->unit, sizeof(out->unit), comp, len);
		copy(prev, sizeof(prev), comp, len);
	}
	if (out->container_id[0] && !out->runtime[0])
		snprintf(out->runtime, sizeof(out->runtime), "container");
}
