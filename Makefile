# tracer: one entry point for build, check, bench, fuzz, demo, install.
#
#   make            build the three daemons and the tracer CLI into build/
#   make check      unit tests (plain and ASan+UBSan) and root integration tests
#   sudo make demo  install missing packages, build, trace the example pipeline
#   make bench      overhead and loss benchmarks -> docs/performance.md
#                   (BENCH_ARGS="--storm N --real-milestones A,B" to size it)
#   make bench-redact  argv redaction's cost per exec -> docs/redaction.md
#   make bench-instructions  the aggregator's instructions per process (OLD=DIR compares)
#   make fuzz       libFuzzer harnesses (FUZZ_SECONDS each)
#   make lint       cppcheck + clang-tidy + clang-format
#   make soak       the soak test for SOAK_SECONDS (default 1800) per build
#   make fleet-test three nspawn machines, Slurm across them, one run (minutes)
#   make fleet-cutoff-test  h2 of that fleet cut off from ClickHouse FLEET_CUTOFF_S (600) s
#   make install    PREFIX=/usr/local DESTDIR=

BUILD    ?= build
CC       ?= cc
CLANG    ?= clang
BPFTOOL  ?= bpftool
PROTOC_C ?= protoc-c
PYTHON   ?= /usr/bin/python3
PREFIX   ?= /usr/local
SANITIZE ?= 0

.DEFAULT_GOAL := all

# Quiet by default; V=1 shows full commands.
ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-8s %s\n' $(1) $(2)
endif

ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wno-unused-parameter
CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_GNU_SOURCE $(WARN) -I. -I$(BUILD) -I$(BUILD)/proto
LDLIBS  :=

ifeq ($(SANITIZE),1)
CC      := clang
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# The sanitizer runtimes need syscalls the collector's allow-list refuses (LeakSanitizer
# ptrace-stops the threads and reads /proc at exit): those builds run without it.
CFLAGS  += -DTRACER_SANITIZED
LDFLAGS += -fsanitize=address,undefined
endif

# Debian's libnng-dev ships no pkg-config file, so libraries are named directly.
LIBS_COLLECTOR  := -lbpf -lelf -lz -lprotobuf-c -lnng -linih -lseccomp -lpthread
LIBS_AGGREGATOR := -lprotobuf-c -lnng -lsqlite3 -ljansson -linih -lpthread -lm
LIBS_SHIPPER    := -lsqlite3 -ljansson -lcurl -linih -lz
LIBS_CLI        := -lprotobuf-c -lnng -lsqlite3 -ljansson -lcurl -linih -lpthread -lm

# --- generated sources -------------------------------------------------------
VMLINUX_H := $(BUILD)/vmlinux.h
PROTO_C   := $(BUILD)/proto/tracer.pb-c.c
PROTO_H   := $(BUILD)/proto/tracer.pb-c.h
BPF_OBJS  := $(BUILD)/tracer.bpf.o
BPF_SKELS := $(BPF_OBJS:.bpf.o=.skel.h)

$(VMLINUX_H):
	@mkdir -p $(@D)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.c bpf/*.h) $(VMLINUX_H)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
		-I$(BUILD) -Ibpf -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

SCHEMA_SQL := $(sort $(wildcard aggregator/schema/*.sql))
$(BUILD)/schema_sql.c: $(SCHEMA_SQL) aggregator/schema/embed.sh
	@mkdir -p $(@D)
	$(call msg,GEN,$@)
	$(Q)aggregator/schema/embed.sh $(SCHEMA_SQL) > $@.tmp && mv $@.tmp $@

$(BUILD)/report_template.c: cli/render/report_template.html cli/embed_text.sh
	@mkdir -p $(@D)
	$(call msg,GEN,$@)
	$(Q)cli/embed_text.sh report_template $< > $@.tmp && mv $@.tmp $@

# The redaction rules built in: deploy/etc/redact.rules when the collector was built.
$(BUILD)/redact_rules_default.c: deploy/etc/redact.rules cli/embed_text.sh
	@mkdir -p $(@D)
	$(call msg,GEN,$@)
	$(Q)cli/embed_text.sh redact_rules_default $< > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/$(BUILD)/redact_rules_default.o: $(BUILD)/redact_rules_default.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/report_template.o: $(BUILD)/report_template.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/schema_sql.o: $(BUILD)/schema_sql.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(PROTO_C) $(PROTO_H): proto/tracer.proto
	@mkdir -p $(BUILD)/proto
	$(call msg,PROTOC,$<)
	$(Q)$(PROTOC_C) --proto_path=proto --c_out=$(BUILD)/proto $<

# --- sources per program ------------------------------------------------------
COMMON_SRCS := common/log.c common/timeutil.c common/frame.c common/frame_arena.c common/ipc.c common/privdrop.c \
               common/hostinfo.c common/exitstatus.c common/bytebuf.c common/fileutil.c common/paths.c \
               common/sdnotify.c common/strutil.c common/confkey.c common/strmap.c common/ipc_auth.c \
               common/options.c common/taskdir.c
# Argv redaction: a pure function of (argv, rules), what the fuzzer and the bench link.
REDACT_CORE := collector/redact/argv.c collector/redact/words.c collector/redact/inside.c \
               collector/redact/keys.c collector/redact/rules.c \
               collector/redact/pairs.c collector/redact/code.c collector/redact/shell.c \
               collector/redact/tokens.c collector/redact/urls.c collector/redact/spans.c \
               $(BUILD)/redact_rules_default.c
REDACT_SRCS := $(REDACT_CORE) common/fileutil.c
COLLECTOR_SRCS := collector/main.c collector/run.c collector/setup/probes.c collector/setup/probe_groups.c collector/setup/pins.c collector/send/drain.c collector/convert/snapshot.c \
                  collector/setup/config.c collector/setup/syscall_table.c \
                  collector/send/sender.c collector/send/handover.c collector/convert/convert.c collector/setup/sandbox.c collector/setup/pidscope.c \
                  $(REDACT_CORE) collector/redact/rules_file.c collector/setup/rules_open.c \
                  collector/setup/rapl.c collector/convert/energy.c
AGGREGATOR_SRCS := aggregator/main.c aggregator/options.c aggregator/receive/receiver.c aggregator/receive/streams.c aggregator/model/proctable.c aggregator/model/procslab.c \
                   aggregator/store/store.c aggregator/store/sql.c aggregator/store/processes.c \
                   aggregator/store/groups.c aggregator/store/telemetry.c aggregator/store/streams.c \
                   aggregator/store/signals.c aggregator/store/ship.c aggregator/store/schema.c aggregator/store/retention.c aggregator/receive/metrics.c aggregator/receive/peers.c aggregator/receive/peerconf.c \
                   aggregator/store/dblock.c \
                   aggregator/ingest/ingest.c aggregator/ingest/process.c aggregator/ingest/launch.c \
                   aggregator/ingest/counters.c aggregator/ingest/data.c aggregator/ingest/clock.c \
                   aggregator/ingest/hold.c aggregator/ingest/write.c aggregator/ingest/resume.c \
                   aggregator/ingest/scope.c aggregator/ingest/path.c aggregator/correlate/engine_argv.c \
                   aggregator/ingest/runmark.c aggregator/ingest/cputime.c aggregator/receive/hostsample.c \
                   aggregator/correlate/tools.c aggregator/correlate/cgroup_path.c \
                   aggregator/model/rollup.c aggregator/correlate/engines.c \
                   aggregator/correlate/snakemake.c aggregator/correlate/nextflow.c \
                   aggregator/correlate/cwl.c aggregator/correlate/toil.c aggregator/correlate/toil_run.c \
                   aggregator/correlate/noise.c aggregator/correlate/script_run.c aggregator/correlate/script.c aggregator/correlate/make.c \
                   aggregator/correlate/correlate.c aggregator/correlate/exits.c aggregator/correlate/runs.c \
                   aggregator/correlate/steps.c aggregator/correlate/step_work.c aggregator/correlate/names.c \
                   aggregator/correlate/cgroups.c aggregator/correlate/scope.c aggregator/correlate/write.c \
                   aggregator/correlate/setup.c aggregator/outbox/outbox.c aggregator/outbox/live.c aggregator/outbox/requeue.c aggregator/outbox/sql.c \
                   aggregator/correlate/containers.c aggregator/correlate/container_cli.c \
                   aggregator/store/containers.c aggregator/correlate/batch.c \
                   aggregator/correlate/batch_argv.c aggregator/store/batch.c \
                   aggregator/insight/signals.c aggregator/insight/raise.c \
                   aggregator/insight/stall.c aggregator/insight/steps.c \
                   aggregator/insight/limits.c aggregator/insight/config.c common/character.c \
                   common/jsonutil.c common/sqlite_writer.c
# The CLI by layer (docs/architecture.md, cli/*/internal.h); each may use those listed after it.
CLI_VERBS  := cli/verbs/cmd_run.c cli/verbs/cmd_show.c cli/verbs/cmd_status.c cli/verbs/cmd_runs.c \
              cli/verbs/cmd_signals.c cli/verbs/cmd_explain.c cli/verbs/cmd_cost.c cli/verbs/cmd_recommend.c \
              cli/verbs/cmd_idle.c cli/verbs/cmd_report.c cli/verbs/cmd_timeline.c cli/verbs/cmd_top.c \
              cli/verbs/fleet_idle.c cli/verbs/cmd_export.c cli/verbs/cmd_energy.c \
              cli/verbs/cmd_retention.c
CLI_LAUNCH := cli/launch/selfhosted.c cli/launch/launch.c cli/launch/command.c cli/launch/runuser.c
CLI_MODEL  := cli/model/runreport.c cli/model/reportdata.c cli/model/health.c cli/model/containers.c cli/model/batchjobs.c \
              cli/model/rocrate.c cli/model/rocrate_actions.c cli/model/rocrate_files.c cli/model/rocrate_write.c \
              cli/model/provpath.c cli/model/pkgowner.c
CLI_COST   := cli/cost/usage.c cli/cost/prices.c cli/cost/hostprice.c cli/cost/costconf.c cli/cost/costrun.c \
              cli/cost/rightsize.c cli/cost/idle.c cli/cost/costsplit.c \
              cli/cost/energy.c cli/cost/energytable.c cli/cost/energyrun.c cli/cost/energymeasure.c cli/cost/energyfleet.c \
              cli/cost/costfleet.c
CLI_DB     := cli/db/clidb.c cli/db/findrun.c cli/db/rows.c cli/db/dbkind.c cli/db/fleet.c cli/db/fleet_load.c cli/db/fleet_copy.c cli/db/fleet_pipeline.c cli/db/fleet_tsv.c \
              cli/db/fleet_join.c cli/db/fleet_rows.c cli/db/fleet_match.c cli/db/fleet_merge.c cli/db/fleet_hosts.c \
              cli/db/fleet_runs_join.c cli/db/fleet_window.c cli/db/fleet_jobside.c cli/db/fleet_live.c cli/db/fleet_energy.c
CLI_RENDER := cli/render/report.c cli/render/report_summary.c cli/render/report_outcome.c \
              cli/render/clierror.c cli/render/export.c cli/render/explain.c cli/render/format.c \
              cli/render/termsafe.c cli/render/containers_text.c cli/render/batch_text.c \
              cli/render/status_text.c
CLI_SRCS := cli/tracer.c $(CLI_VERBS) $(CLI_LAUNCH) $(CLI_MODEL) $(CLI_COST) $(CLI_DB) $(CLI_RENDER) \
            aggregator/store/schema.c common/character.c common/cloudmeta.c aggregator/ingest/runmark.c \
            common/jsonutil.c aggregator/store/dblock.c shipper/credentials.c

SHIPPER_SRCS := shipper/main.c shipper/options.c shipper/outbox_reader.c shipper/http.c shipper/gzip.c \
                shipper/retry.c shipper/sink.c shipper/sink_io.c shipper/sink_clickhouse.c shipper/sink_http.c \
                shipper/credentials.c aggregator/store/schema.c common/sqlite_writer.c

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

COMMON_OBJS     := $(call obj,$(COMMON_SRCS)) $(BUILD)/obj/proto/tracer.pb-c.o
COLLECTOR_OBJS  := $(call obj,$(COLLECTOR_SRCS))
AGGREGATOR_OBJS := $(call obj,$(AGGREGATOR_SRCS)) $(BUILD)/obj/schema_sql.o
SHIPPER_OBJS    := $(call obj,$(SHIPPER_SRCS)) $(BUILD)/obj/schema_sql.o
CLI_OBJS        := $(call obj,$(CLI_SRCS)) $(BUILD)/obj/schema_sql.o $(BUILD)/obj/report_template.o

PROGRAMS := $(BUILD)/tracer-collector $(BUILD)/tracer-aggregator $(BUILD)/tracer-shipper $(BUILD)/tracer
HELPERS  := $(patsubst test/helpers/%.c,$(BUILD)/helpers/%,$(wildcard test/helpers/*.c)) \
            $(patsubst test/helpers/ipc/%.c,$(BUILD)/helpers/%,$(wildcard test/helpers/ipc/*.c))

all: $(PROGRAMS) $(if $(filter 1,$(SANITIZE)),,$(HELPERS))

programs: $(PROGRAMS)

# Man pages: hand-written roff in deploy/man/ (test/docs/test_man.py holds them to
# --help). `make man` checks they render without a warning; install fills in the version
# and the configured directories, as it does for the units.
MANPAGES := deploy/man/tracer.1 deploy/man/tracer-collector.8 \
            deploy/man/tracer-aggregator.8 deploy/man/tracer-shipper.8
TRACER_VERSION := $(shell sed -n 's/.*define TRACER_VERSION "\(.*\)"/\1/p' common/version.h)
man:
	groff -man -ww -z $(MANPAGES)

$(BUILD)/obj/%.o: %.c | $(PROTO_H)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/proto/tracer.pb-c.o: $(PROTO_C)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Wno-missing-prototypes -c $< -o $@

$(call obj,$(COLLECTOR_SRCS)): $(BPF_SKELS)

$(BUILD)/tracer-collector: $(COLLECTOR_OBJS) $(COMMON_OBJS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_COLLECTOR)

$(BUILD)/tracer-aggregator: $(AGGREGATOR_OBJS) $(COMMON_OBJS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_AGGREGATOR)

# The shipper links no IPC or protobuf code: it never talks to the collector.
$(BUILD)/tracer-shipper: $(SHIPPER_OBJS) $(call obj,common/log.c common/timeutil.c common/hostinfo.c \
                         common/privdrop.c common/paths.c common/fileutil.c common/sdnotify.c \
                         common/confkey.c common/options.c)
	$(call msg,CC,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_SHIPPER)

$(BUILD)/tracer: $(CLI_OBJS) $(COMMON_OBJS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_CLI)

$(BUILD)/helpers/%: test/helpers/%.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -pthread -o $@ $< $(LDFLAGS)

# Helpers that speak our IPC protocol (ipc/) link the common objects.
$(BUILD)/helpers/%: test/helpers/ipc/%.c $(COMMON_OBJS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LIBS_CLI)

# The collector's own sources, for the root-window lint (test/lint/root_window.py).
print-collector-sources:
	@echo $(COLLECTOR_SRCS) $(COMMON_SRCS)

# --- tests ----------------------------------------------------------------------
UNIT_TESTS := $(patsubst test/unit/%.c,$(BUILD)/unit/%,$(wildcard test/unit/test_*.c))
# Each program's objects (less main) in a static archive: a test binary links
# the archives and so takes only the objects it references, and what those do.
LIB_DIR := $(BUILD)/lib
UNIT_ARCHIVES := $(LIB_DIR)/libaggregator.a $(LIB_DIR)/libcollector.a $(LIB_DIR)/libcli.a \
                 $(LIB_DIR)/libshipper.a $(LIB_DIR)/libcommon.a
$(LIB_DIR)/libaggregator.a: $(filter-out $(BUILD)/obj/aggregator/main.o,$(AGGREGATOR_OBJS))
$(LIB_DIR)/libcollector.a: $(filter-out $(BUILD)/obj/collector/main.o,$(COLLECTOR_OBJS))
$(LIB_DIR)/libcli.a: $(filter-out $(BUILD)/obj/cli/tracer.o,$(CLI_OBJS))
$(LIB_DIR)/libshipper.a: $(filter-out $(BUILD)/obj/shipper/main.o,$(SHIPPER_OBJS))
$(LIB_DIR)/libcommon.a: $(COMMON_OBJS)
$(UNIT_ARCHIVES):
	@mkdir -p $(@D)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/unit/%: test/unit/%.c $(UNIT_ARCHIVES)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(UNIT_ARCHIVES) $(LDFLAGS) -lcmocka $(LIBS_COLLECTOR) \
		$(LIBS_AGGREGATOR) $(LIBS_CLI) $(LIBS_SHIPPER)

# It makes realloc fail on purpose (the link wraps it).
$(BUILD)/unit/test_proctable: LDFLAGS += -Wl,--wrap=realloc

# The suppressions cover leaks inside nng 1.5 (see the file), as in the integration tests.
# The timeout turns a hang (nng 1.5.2's close can wait for good) into a failure.
unit: $(UNIT_TESTS) $(MANPAGES)
	@set -e; for t in $(UNIT_TESTS); do echo "== $$t"; \
		LSAN_OPTIONS=suppressions=$(CURDIR)/test/lsan.supp timeout 300 $$t; done
	$(PYTHON) test/prices/test_build_table.py
	$(PYTHON) test/docs/test_schema_doc.py
	BUILD=$(BUILD) $(PYTHON) test/docs/test_completion.py
	BUILD=$(BUILD) $(PYTHON) test/docs/test_man.py
	BUILD=$(BUILD) $(PYTHON) test/docs/test_options.py

# The shipped settings files are the daemons' option tables printed (test_options checks).
configs: $(BUILD)/tracer-collector $(BUILD)/tracer-aggregator $(BUILD)/tracer-shipper
	$(BUILD)/tracer-collector --print-config > deploy/etc/collector.conf
	$(BUILD)/tracer-aggregator --print-config > deploy/etc/aggregator.conf
	$(BUILD)/tracer-shipper --print-config > deploy/etc/shipper.conf.example

# Tests need root (BPF); as root, missing Debian packages are installed first.
check: deps
	$(MAKE) -j$(shell nproc) all unit
	$(MAKE) -j$(shell nproc) BUILD=build/asan SANITIZE=1 all unit
	$(PYTHON) test/integration/run.py --build $(BUILD) --asan-build build/asan

deps:
	@deploy/install-deps.sh all

# The demo needs its pipeline's tools only, not the test suite's servers and browsers.
demo:
	@deploy/install-deps.sh demo
	$(MAKE) all
	examples/demo/run-demo.sh

# Fuzzing (clang libFuzzer + ASan + UBSan): make fuzz [FUZZ_SECONDS=60]. Each harness in
# test/fuzz/ runs for FUZZ_SECONDS from its corpus; a crash fails the target and leaves
# the input in build/fuzz/.
FUZZ_SECONDS ?= 60
FUZZ_BUILD   := build/fuzz
FUZZ_FLAGS   := -std=c11 -D_GNU_SOURCE -g -O1 -I. -I$(BUILD) -I$(BUILD)/proto \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_SRC_frame      := common/frame.c common/frame_arena.c $(PROTO_C) common/log.c common/timeutil.c
FUZZ_LIB_frame      := -lprotobuf-c
FUZZ_SRC_redact     := $(REDACT_SRCS)
FUZZ_SRC_text_files := collector/setup/config.c common/options.c collector/setup/pidscope.c aggregator/correlate/tools.c common/fileutil.c common/strutil.c common/confkey.c \
                       common/log.c common/timeutil.c shipper/credentials.c
FUZZ_LIB_text_files := -linih
FUZZ_SRC_strings    := aggregator/correlate/cgroup_path.c aggregator/correlate/tools.c \
                       common/fileutil.c common/strutil.c shipper/http.c
FUZZ_LIB_strings    := -lcurl
FUZZ_SRC_ingest     := $(filter-out aggregator/main.c,$(AGGREGATOR_SRCS)) $(COMMON_SRCS) $(PROTO_C) \
                       $(BUILD)/schema_sql.c
FUZZ_LIB_ingest     := $(LIBS_AGGREGATOR)
FUZZERS := frame ingest redact text_files strings
# Valid frames as starting points for the frame and ingest fuzzers.
FUZZ_SEEDED := frame ingest
$(FUZZ_BUILD)/frame_seeds: test/fuzz/frame_seeds.c common/frame.c common/frame_arena.c $(PROTO_C) $(PROTO_H)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)clang -std=c11 -D_GNU_SOURCE -g -I. -I$(BUILD) -I$(BUILD)/proto -o $@ $< common/frame.c \
		common/frame_arena.c $(PROTO_C) -lprotobuf-c

.SECONDEXPANSION:
$(FUZZ_BUILD)/fuzz_%: test/fuzz/fuzz_%.c $(PROTO_H) $$(FUZZ_SRC_$$*)
	@mkdir -p $(@D)
	$(call msg,FUZZ,$@)
	$(Q)clang $(FUZZ_FLAGS) -o $@ $< $(FUZZ_SRC_$*) $(FUZZ_LIB_$*)

fuzz: $(addprefix $(FUZZ_BUILD)/fuzz_,$(FUZZERS)) $(FUZZ_BUILD)/frame_seeds
	@set -e; for f in $(FUZZ_SEEDED); do mkdir -p $(FUZZ_BUILD)/corpus/$$f; done; \
	$(FUZZ_BUILD)/frame_seeds $(addprefix $(FUZZ_BUILD)/corpus/,$(FUZZ_SEEDED))
	test/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZERS)

# Refresh the price table: make prices AWS_BULK=index.json [SPOT=spot.json] [REGION=...]
# (AWS_BULK: the region's Price List bulk JSON; SPOT: describe-spot-price-history output).
prices:
	@test -n "$(AWS_BULK)" || { echo "make prices AWS_BULK=FILE [SPOT=FILE] [REGION=r]"; exit 2; }
	$(PYTHON) deploy/prices/build_table.py --aws-bulk $(AWS_BULK) $(if $(SPOT),--spot $(SPOT)) \
		$(if $(REGION),--region $(REGION)) > deploy/etc/prices.tsv.new
	mv deploy/etc/prices.tsv.new deploy/etc/prices.tsv

# Overhead and loss benchmarks (root): results in docs/performance.md.
bench:
	@deploy/install-deps.sh bench
	$(MAKE) all $(BUILD)/bench/open_floor $(BUILD)/bench/open_floor.bpf.o $(BUILD)/bench/pathbench
	$(PYTHON) test/bench/bench.py --build $(BUILD) $(BENCH_ARGS)

# Start-up alone (docs/startup.md): tracer run -- true, probe loading per group.
bench-startup: all
	$(PYTHON) test/bench/startup.py --build $(BUILD) $(BENCH_ARGS)

# The database kept within its bounds on a busy host (docs/retention.md): size and CPU.
bench-retention: all
	$(PYTHON) test/bench/retention.py --build $(BUILD) $(BENCH_ARGS)

# The fleet store (docs/performance.md, Fleet store): rows and bytes shipped per host per day
# (the storm, the demo on a loop), 100 hosts x 1 day in ClickHouse, the fleet verbs' time on it.
# Root, clickhouse-server; about 25 minutes. Not part of make check.
bench-fleet: all
	$(PYTHON) test/bench/fleet_bench.py --build $(BUILD) $(BENCH_ARGS)

# tracer report's page at three sizes in headless Chromium (docs/report.md, screenshots).
bench-report: all
	$(PYTHON) test/bench/report_bench.py --build $(BUILD) $(BENCH_ARGS)

# What real, normalised file paths cost (docs/paths.md): chdir followed, paths joined.
bench-paths: all $(BUILD)/bench/pathbench
	$(PYTHON) test/bench/paths.py --build $(BUILD) $(BENCH_ARGS)

# What argv redaction costs per exec, on real command lines (docs/redaction.md).
bench-redact: $(BUILD)/bench/redactbench
	{ echo; echo "Measured $$(date -u '+%Y-%m-%d %H:%M UTC') on $$(hostname) ($$(uname -r), $$(nproc) CPUs, load $$(cut -d' ' -f1 /proc/loadavg))."; echo; \
	  $(BUILD)/bench/redactbench; echo; } > $(BUILD)/bench/redact-cost.md
	awk -v f=$(BUILD)/bench/redact-cost.md 'BEGIN { while ((getline l < f) > 0) t = t l "\n" } \
	  /<!-- bench-redact:end -->/ { printf "%s", t; skip = 0 } !skip { print } \
	  /<!-- bench-redact:start -->/ { skip = 1 }' docs/redaction.md > docs/redaction.md.tmp
	mv docs/redaction.md.tmp docs/redaction.md
	cat $(BUILD)/bench/redact-cost.md

$(BUILD)/bench/redactbench: test/bench/redactbench.c $(REDACT_SRCS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS)

# The scheduler hooks' cost against an older build (docs/performance.md, Scheduler hooks):
# sudo make bench-sched OLD=../base/build BENCH_ARGS="--rounds 8".
bench-sched: all
	$(PYTHON) test/bench/sched_ab.py $(OLD) $(BUILD) $(BENCH_ARGS)

# The exec storm as a service runs it: a long-lived aggregator over a 100,000-process
# history against fresh daemons and an A/A control (docs/performance-deployed.md).
bench-deployed: all
	$(PYTHON) test/bench/deployed.py --build $(BUILD) $(BENCH_ARGS)

# The aggregator's instructions per ingested process, under callgrind (OLD=BUILD_DIR compares a build).
bench-instructions: all
	@deploy/install-deps.sh bench
	test/bench/aggregator_instructions.sh $(OLD) $(BUILD)

# What one process row costs the aggregator's store, and each index of it (docs/performance-notes.md).
bench-rows: $(BUILD)/bench/rowbench
	$(BUILD)/bench/rowbench $(BENCH_ARGS)

$(BUILD)/bench/rowbench: test/bench/rowbench.c $(UNIT_ARCHIVES)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(UNIT_ARCHIVES) $(LDFLAGS) $(LIBS_AGGREGATOR)

$(BUILD)/bench/pathbench: test/bench/pathbench.c aggregator/ingest/path.c common/jsonutil.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) -ljansson

# The bench's floor under file tracking: empty programs on the open tracepoints.
$(BUILD)/bench/open_floor.bpf.o: test/bench/open_floor.bpf.c $(VMLINUX_H)
	@mkdir -p $(@D)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -Wall -Werror -I$(BUILD) -c $< -o $@

$(BUILD)/bench/open_floor: test/bench/open_floor.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(LDFLAGS) -lbpf -lelf -lz

.SECONDARY:
.PHONY: programs man configs deb package-test fleet-test fleet-cutoff-test
.PHONY: all unit check deps demo bench bench-startup bench-paths bench-retention bench-report bench-redact bench-rows bench-instructions bench-sched bench-deployed bench-fleet clean install uninstall format prices fuzz lint soak

# Installation (PREFIX, DESTDIR): binaries, units, sysusers/tmpfiles, config, docs.
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec/tracer
UNITDIR    ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
DOCDIR     ?= $(PREFIX)/share/doc/tracer
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
MANDIR     ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc/tracer
# tracer run looks for the daemons here when they are not beside it or in ../libexec/tracer.
$(BUILD)/obj/cli/launch/launch.o: CFLAGS += -DTRACER_LIBEXECDIR='"$(LIBEXECDIR)"'
UNITS   := tracer.target tracer-collector.service tracer-aggregator.service tracer-shipper.service
CONFIGS := collector.conf aggregator.conf tools.allow tools.deny redact.rules prices.tsv cost.conf energy.conf shipper.conf.example
DOCS    := README.md $(wildcard docs/*.md)

install: $(PROGRAMS) $(MANPAGES)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR) $(DESTDIR)$(DOCDIR)/docs \
		$(DESTDIR)$(SYSCONFDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(COMPLETIONDIR)
	for m in $(MANPAGES); do \
		sed -e 's|@VERSION@|$(TRACER_VERSION)|' -e 's|/usr/libexec/tracer|$(LIBEXECDIR)|g' \
			-e 's|/etc/tracer|$(SYSCONFDIR)|g' $$m \
			> $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m##*/} && chmod 0644 $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m##*/}; \
	done
	install -m 0644 deploy/bash-completion/tracer $(DESTDIR)$(COMPLETIONDIR)/tracer
	install -m 0755 $(BUILD)/tracer $(DESTDIR)$(BINDIR)/tracer
	install -m 0755 $(BUILD)/tracer-collector $(BUILD)/tracer-aggregator $(BUILD)/tracer-shipper \
		$(DESTDIR)$(LIBEXECDIR)/
	for u in $(UNITS); do \
		sed -e 's|/usr/libexec/tracer|$(LIBEXECDIR)|g' -e 's|/etc/tracer|$(SYSCONFDIR)|g' \
			deploy/systemd/$$u > $(DESTDIR)$(UNITDIR)/$$u && chmod 0644 $(DESTDIR)$(UNITDIR)/$$u; \
	done
	install -m 0644 deploy/sysusers.d/tracer.conf $(DESTDIR)$(SYSUSERSDIR)/tracer.conf
	sed -e 's|/etc/tracer|$(SYSCONFDIR)|g' deploy/tmpfiles.d/tracer.conf \
		> $(DESTDIR)$(TMPFILESDIR)/tracer.conf
	@# Configuration is the operator's: an edited file stays, ours lands beside it as .dist.
	@for c in $(CONFIGS); do \
		t=$(DESTDIR)$(SYSCONFDIR)/$$c; \
		if [ ! -e $$t ]; then install -m 0644 deploy/etc/$$c $$t; \
		elif ! cmp -s deploy/etc/$$c $$t; then install -m 0644 deploy/etc/$$c $$t.dist; \
			echo "kept your $$t; the shipped version is $$t.dist"; fi; \
	done
	install -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -m 0644 $(wildcard docs/*.md) $(DESTDIR)$(DOCDIR)/docs/
	@# Into the running system only (no DESTDIR, a system PREFIX, root): users,
	@# directories, units. A staging PREFIX must not create users on this host.
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && \
		{ [ "$(PREFIX)" = /usr ] || [ "$(PREFIX)" = /usr/local ]; }; then \
		command -v systemd-sysusers >/dev/null && systemd-sysusers $(SYSUSERSDIR)/tracer.conf; \
		command -v systemd-tmpfiles >/dev/null && systemd-tmpfiles --create $(TMPFILESDIR)/tracer.conf; \
		if [ -d /run/systemd/system ]; then systemctl daemon-reload; fi; \
		true; \
	fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/tracer
	rm -f $(addprefix $(DESTDIR)$(LIBEXECDIR)/,tracer-collector tracer-aggregator tracer-shipper)
	rm -f $(addprefix $(DESTDIR)$(UNITDIR)/,$(UNITS))
	rm -f $(DESTDIR)$(SYSUSERSDIR)/tracer.conf $(DESTDIR)$(TMPFILESDIR)/tracer.conf
	@# Only configuration as shipped; what the operator edited stays.
	@for c in $(CONFIGS); do \
		t=$(DESTDIR)$(SYSCONFDIR)/$$c; \
		if cmp -s deploy/etc/$$c $$t; then rm -f $$t; elif [ -e $$t ]; then echo "kept $$t (edited)"; fi; \
		rm -f $$t.dist; \
	done
	rm -rf $(DESTDIR)$(DOCDIR)
	rm -f $(DESTDIR)$(COMPLETIONDIR)/tracer
	rm -f $(DESTDIR)$(MANDIR)/man1/tracer.1 $(addprefix $(DESTDIR)$(MANDIR)/man8/,$(notdir $(filter %.8,$(MANPAGES))))
	-rmdir $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(SYSCONFDIR) 2>/dev/null

# The soak test alone, long (default 30 min) against the plain and ASan builds.
SOAK_SECONDS ?= 1800
soak: deps
	$(MAKE) all
	$(MAKE) BUILD=build/asan SANITIZE=1 all
	SOAK_SECONDS=$(SOAK_SECONDS) $(PYTHON) test/integration/run.py --build $(BUILD) \
		--asan-build build/asan -k soak_

# Static analysis and style (cppcheck + clang-tidy + clang-format; config in test/lint/,
# .clang-tidy and .clang-format); CI runs it.
lint: $(PROGRAMS)
	test/lint/run.sh $(BUILD)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build

# The Debian package (debian/): ../tracer_VERSION_ARCH.deb, built unsigned.
deb:
	dpkg-buildpackage -b -us -uc

# Builds the package, then installs, reinstalls and removes it in a Debian 12
# booted with systemd (test/integration/test_systemd.py; minutes, so not in CI).
package-test: deb all
	TRACER_PACKAGE_TEST=1 python3 test/integration/run.py --build $(BUILD) -k debian_package

# Builds the package, then boots three Debian 12 machines with systemd-nspawn, installs it
# in each, runs Slurm across them and pipelines whose jobs run on the other two, and
# reads them with tracer --fleet (test/fleet/; docs/shipping.md: minutes, so not in CI).
# The package is copied at once: ../ is shared with whatever else builds one there.
FLEET_DEB = $(BUILD)/fleet/tracer.deb
fleet-test: deb all
	@mkdir -p $(BUILD)/fleet
	cp ../tracer_$$(dpkg-parsechangelog -S Version)_$$(dpkg --print-architecture).deb $(FLEET_DEB)
	$(PYTHON) test/fleet/main.py --build $(BUILD) --deb $(FLEET_DEB)

# The same fleet, host h2 cut off from ClickHouse for FLEET_CUTOFF_S s while it runs work,
# then restored (test/fleet/test_fleet_cutoff.py; docs/testing.md: about 14 minutes at 600).
FLEET_CUTOFF_S ?= 600
fleet-cutoff-test: deb all
	@mkdir -p $(BUILD)/fleet
	cp ../tracer_$$(dpkg-parsechangelog -S Version)_$$(dpkg --print-architecture).deb $(FLEET_DEB)
	$(PYTHON) test/fleet/main.py --build $(BUILD) --deb $(FLEET_DEB) --cutoff-s $(FLEET_CUTOFF_S)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
