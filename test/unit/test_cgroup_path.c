/* Real cgroup paths of every runtime we recognise, v1 and v2 layouts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "aggregator/correlate/cgroup_path.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

struct case_ {
	const char *path;
	const char *runtime, *container, *pod, *ecs_task, *unit, *job, *step;
};

static const struct case_ cases[] = {
    {"/docker/" ID, "docker", ID, "", "", "", "", ""},
    {"/system.slice/docker-" ID ".scope", "docker", ID, "", "", "", "", ""},
    {"/kubepods.slice/kubepods-besteffort.slice/"
     "kubepods-besteffort-pod1a2b3c4d_5e6f_7a8b_9c0d_112233445566.slice/cri-containerd-" ID
     ".scope",
     "containerd", ID, "1a2b3c4d-5e6f-7a8b-9c0d-112233445566", "", "", "", ""},
    {"/kubepods.slice/kubepods-pod1a2b3c4d_5e6f_7a8b_9c0d_112233445566.slice/cri-containerd-" ID
     ".scope",
     "containerd", ID, "1a2b3c4d-5e6f-7a8b-9c0d-112233445566", "", "", "", ""},
    {"/kubepods.slice/kubepods-burstable.slice/"
     "kubepods-burstable-pod8daa50c3a64c9ff60bb9eab7b44b56fd.slice/crio-" ID ".scope",
     "cri-o", ID, "8daa50c3a64c9ff60bb9eab7b44b56fd", "", "", "", ""},
    {"/kubepods/burstable/pod1a2b3c4d-5e6f-7a8b-9c0d-112233445566/" ID, "containerd", ID,
     "1a2b3c4d-5e6f-7a8b-9c0d-112233445566", "", "", "", ""},
    {"/machine.slice/libpod-" ID ".scope", "podman", ID, "", "", "", "", ""},
    {"/machine.slice/libpod-" ID ".scope/container", "podman", ID, "", "", "", "", ""},
    {"/machine.slice/libpod-conmon-" ID ".scope", "", "", "", "", "", "", ""},
    {"/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope", "podman", ID,
     "", "", "user@1000.service", "", ""},
    {"/libpod_parent/libpod-" ID, "podman", ID, "", "", "", "", ""},
    {"/ecs/0123456789abcdef0123456789abcdef/" ID, "ecs", ID, "", "0123456789abcdef0123456789abcdef",
     "", "", ""},
    {"/ecstasks.slice/ecstasks-0123456789abcdef0123456789abcdef.slice/docker-" ID ".scope", "ecs",
     ID, "", "0123456789abcdef0123456789abcdef", "", "", ""},
    {"/ecs/0123456789abcdef0123456789abcdef/0123456789abcdef0123456789abcdef-1234567890", "ecs",
     "0123456789abcdef0123456789abcdef-1234567890", "", "0123456789abcdef0123456789abcdef", "", "",
     ""},
    {"/slurm/uid_1000/job_42/step_batch", "", "", "", "", "", "42", "batch"},
    {"/slurm_vm/uid_0/job_7/step_0/task_0", "", "", "", "", "", "7", "0"},
    {"/system.slice/slurmstepd.scope/job_1234/step_extern/user/task_special", "", "", "", "",
     "slurmstepd.scope", "1234", "extern"},
    {"/system.slice/slurmstepd.scope/s5K1KKYAYG5D00/step_0/user/task_0", "", "", "", "",
     "slurmstepd.scope", "s5K1KKYAYG5D00", "0"},
    {"/system.slice/nginx.service", "", "", "", "", "nginx.service", "", ""},
    {"/user.slice/user-1000.slice/session-3.scope", "", "", "", "", "session-3.scope", "", ""},
    {"/", "", "", "", "", "", "", ""},
    {"/process_api/3ba08935edd49df2a9f77d9376513cae", "", "", "", "", "", "", ""},
};

static void test_paths(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct case_ *c = &cases[i];
		struct cgroup_context ctx;
		cgroup_path_parse(c->path, &ctx);
		if (strcmp(ctx.runtime, c->runtime) || strcmp(ctx.container_id, c->container) ||
		    strcmp(ctx.pod_uid, c->pod) || strcmp(ctx.ecs_task, c->ecs_task) ||
		    strcmp(ctx.slurm_job, c->job) || strcmp(ctx.slurm_step, c->step) ||
		    (c->unit[0] && strcmp(ctx.unit, c->unit)))
			fail_msg("%s\n got runtime=%s id=%s pod=%s task=%s unit=%s job=%s step=%s",
				 c->path, ctx.runtime, ctx.container_id, ctx.pod_uid, ctx.ecs_task,
				 ctx.unit, ctx.slurm_job, ctx.slurm_step);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_paths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
