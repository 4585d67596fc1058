/*
 * Which installed package an executable came from, and its version: the
 * Debian package whose file list names it (dpkg's database), or the conda
 * package whose record in the environment's conda-meta/ lists it. Read by the
 * unprivileged CLI at export time (docs/security.md): package metadata only.
 */
#ifndef TRACER_CLI_PKGOWNER_H
#define TRACER_CLI_PKGOWNER_H

#include <jansson.h>

#define DPKG_DIR "/var/lib/dpkg"

/*
 * exes is an object whose keys are executable paths; each value becomes the
 * owner found, {"manager": "dpkg"|"conda", "name", "version"} (conda adds
 * "build" and "environment"), or stays null. dpkg_dir: DPKG_DIR, or a copy of
 * one for tests. Returns how many were found.
 */
int pkg_owners(json_t *exes, const char *dpkg_dir);

#endif
