/* The tracer command's verbs; each returns the process exit code. */
#ifndef TRACER_COMMANDS_H
#define TRACER_COMMANDS_H

#include <stdbool.h>

int cmd_run(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_runs(int argc, char **argv);
int cmd_signals(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_cost(int argc, char **argv);
int cmd_recommend(int argc, char **argv);
int cmd_idle(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_energy(int argc, char **argv);
int cmd_retention(int argc, char **argv);

#endif
