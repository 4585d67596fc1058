/* File paths as users look them up: absolute and normalised. */
#ifndef TRACER_INGEST_PATH_H
#define TRACER_INGEST_PATH_H

/*
 * Normalises an absolute path in place, lexically (no symlinks are read):
 * repeated slashes become one, "." components go, ".." removes the component
 * before it (never above the root), and a trailing slash goes. A relative
 * path is left as it is.
 */
void path_normalize(char *path);

#endif
