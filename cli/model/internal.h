/*
 * The files of model/: what the verbs show, read from the database (through
 * db/) into JSON documents. A model file may use cost/, db/ and render/ (the
 * report's document holds sentences render/ writes), never verbs/ or launch/;
 * what it prints, render/ prints (the one door: runreport.h's report_print_run,
 * which loads and hands the document to render/report.h).
 *   runreport.c   the run report's data: processes as a forest, totals, steps and tools
 *   containers.c  the containers a run started, linked or ambiguous (container_links)
 *   batchjobs.c   a run's batch jobs and the work it handed elsewhere (sacct names)
 *   health.c      whether tracer is healthy, and whether a run without an end is watched
 *   reportdata.c  tracer report's page as one JSON document
 *   rocrate.c     a run as a Workflow/Process Run RO-Crate (docs/provenance.md)
 *   rocrate_actions.c  the crate's actions: one per step (or process), and the run's
 *   rocrate_files.c   the files a step read and wrote, as the OS reports them (stat)
 *   rocrate_write.c   the crate's metadata file written into its directory
 *   provpath.c    which paths a crate leaves out (system, libraries, temporaries)
 *   pkgowner.c    the package (dpkg, conda) that owns an executable, and its version
 * Each file's header is its door; nothing is private to the folder yet.
 */
#ifndef TRACER_CLI_MODEL_INTERNAL_H
#define TRACER_CLI_MODEL_INTERNAL_H

#include "cli/model/batchjobs.h"
#include "cli/model/containers.h"
#include "cli/model/health.h"
#include "cli/model/pkgowner.h"
#include "cli/model/provpath.h"
#include "cli/model/reportdata.h"
#include "cli/model/rocrate.h"
#include "cli/model/rocrate_files.h"
#include "cli/model/runreport.h"

#endif
