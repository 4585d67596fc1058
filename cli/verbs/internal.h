/*
 * The files of verbs/: one per verb of the tracer command (commands.h, which
 * cli/tracer.c dispatches to). A verb parses its options, asks model/ (or its
 * own query, through db/) for its data, asks cost/ when it prices, and prints
 * through render/; it may use every layer below it (launch, model, cost, db,
 * render) and no verb includes another's file.
 *   cmd_run.c        tracer run: the daemons (launch/), the command, the report at its end
 *   cmd_show.c       tracer show: a run's process tree, or its rows (--format)
 *   cmd_status.c     tracer status: is tracer healthy (model/health.h)
 *   cmd_runs.c       tracer runs: recorded runs, newest first
 *   cmd_signals.c    tracer signals: what went wrong, and where
 *   cmd_explain.c    tracer explain: why a run or step was slow or failed
 *   cmd_timeline.c   tracer timeline: a text Gantt chart of a run's steps
 *   cmd_top.c        tracer top: what runs now, refreshing
 *   cmd_cost.c       tracer cost: what the host cost and who used it (cost/costrun.h)
 *   cmd_recommend.c  tracer recommend: what to give each step (cost/rightsize.h)
 *   cmd_idle.c       tracer idle: idle periods and their cost (cost/idle.h)
 *   cmd_report.c     tracer report --html: model/reportdata.h's document in the page
 *   fleet_idle.c     tracer --fleet idle: which hosts stopped reporting
 *   cmd_export.c     tracer export --ro-crate: a run's provenance (model/rocrate.h)
 *   cmd_energy.c     tracer energy: energy and CO2e by step, run, tool (cost/energyrun.h)
 *   cmd_retention.c  tracer --fleet retention: the fleet store's old day partitions dropped
 * Nothing here is shared between verbs but commands.h: a helper two verbs need
 * belongs in the layer it is about (model, cost, db or render).
 */
#ifndef TRACER_CLI_VERBS_INTERNAL_H
#define TRACER_CLI_VERBS_INTERNAL_H

#include "cli/verbs/commands.h"

#endif
