/*
 * The files of cost/: what a host costs and who used it (docs/cost.md). A cost
 * file may use db/ and render/, never model/, verbs/ or launch/. costsplit.c,
 * idle.c and prices.c compute from what they are given (no SQL); usage.c,
 * costrun.c and rightsize.c read the rows they need.
 *   prices.c     the price table: prices and shapes of instance types
 *   costconf.c   the site's cost settings (/etc/tracer/cost.conf)
 *   hostprice.c  the host's price per hour: given, or detected from the cloud
 *   usage.c      what each process used of the host in a window (CPU s, GiB-s)
 *   costsplit.c  splitting a host's cost over who used it
 *   costrun.c    a host's cost over a window, split by run, step, tool, user
 *   rightsize.c  what each step used versus was given, and what to give it
 *   idle.c       idle periods of the host and gaps inside runs
 *   energy.c     the energy model's coefficients: energy.conf, defaults (docs/energy.md)
 *   energytable.c  power per core by CPU model, grid intensity by region (sourced tables)
 *   energyrun.c  energy and CO2e of a run's steps, tools and processes, or of a window
 *   energymeasure.c  RAPL package energy over a run's span, shared by CPU time
 *   energyfleet.c  the energy of a window over every host of the fleet store
 *   costfleet.c  the cost of a window over every host of the fleet store, by host
 * Each file's header is its door; nothing is private to the folder yet.
 */
#ifndef TRACER_CLI_COST_INTERNAL_H
#define TRACER_CLI_COST_INTERNAL_H

#include "cli/cost/costconf.h"
#include "cli/cost/costfleet.h"
#include "cli/cost/costrun.h"
#include "cli/cost/costsplit.h"
#include "cli/cost/energy.h"
#include "cli/cost/energyfleet.h"
#include "cli/cost/energymeasure.h"
#include "cli/cost/energyrun.h"
#include "cli/cost/hostprice.h"
#include "cli/cost/idle.h"
#include "cli/cost/prices.h"
#include "cli/cost/rightsize.h"
#include "cli/cost/usage.h"

#endif
