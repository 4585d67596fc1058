/*
 * Which recorded paths a provenance record names (docs/provenance.md), and how
 * a path becomes an identifier in it. Pure functions: no file is touched.
 */
#ifndef TRACER_CLI_PROVPATH_H
#define TRACER_CLI_PROVPATH_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The report's rule (the collector's defaults, applied again here because a
 * site may turn them off): /proc, /sys and /dev, locale data, and shared
 * libraries (*.so, *.so.N..., ld.so.cache) are the system's, not the work's.
 */
bool prov_path_is_system(const char *path);

/*
 * path as a file: URI (RFC 8089, no host), every byte outside the unreserved
 * set and '/' percent-encoded: "/data/a b.txt" -> "file:///data/a%20b.txt".
 * False (out is "") when it does not fit.
 */
bool prov_file_uri(const char *path, char *out, size_t size);

/* Epoch nanoseconds as ISO 8601 UTC with milliseconds: "2026-12-02T01:35:51.123Z". */
void prov_iso_time(long long epoch_ns, char *out, size_t size);

/* text percent-encoded the same way, for a fragment ("#tool/bwa%20mem"). */
bool prov_escape(const char *text, char *out, size_t size);

#endif
