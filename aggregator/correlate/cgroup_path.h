/*
 * What a cgroup path says about where a process runs: the container (docker,
 * containerd/CRI-O under Kubernetes, podman, AWS ECS/Batch), the Kubernetes
 * pod, the Slurm job and step, the systemd unit. Layouts of every runtime,
 * cgroup v1 and v2: docs/correlation.md; REFERENCE.md sections 4 and 5.
 */
#ifndef TRACER_CGROUP_PATH_H
#define TRACER_CGROUP_PATH_H

struct cgroup_context {
	char runtime[16];      /* docker, containerd, cri-o, podman, ecs, or "" */
	char container_id[80]; /* 64 hex, or ECS Fargate <32hex>-<digits> */
	char pod_uid[40];      /* Kubernetes pod uid, with dashes */
	char ecs_task[40];     /* ECS/Batch task id */
	char unit[128];	       /* systemd unit: foo.service, session-3.scope */
	char slurm_job[32];    /* numeric job id, or the SLUID on Slurm 26.05+ */
	char slurm_step[24];   /* batch, extern, interactive, 0, 1, ... */
};

void cgroup_path_parse(const char *path, struct cgroup_context *out);

#endif
