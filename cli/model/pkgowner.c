#include "cli/model/pkgowner.h"

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Merged /usr: dpkg lists /bin/bash, the kernel names /usr/bin/bash. */
static void usrmerge_alias(const char *exe, char *out, size_t size)
{
	static const char *const dirs[] = {"/bin/", "/sbin/", "/lib/", "/lib64/"};

	out[0] = '\0';
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		size_t n = strlen(dirs[i]);
		if (!strncmp(exe, "/usr", 4) && !strncmp(exe + 4, dirs[i], n))
			snprintf(out, size, "%s", exe + 4);
		else if (!strncmp(exe, dirs[i], n))
			snprintf(out, size, "/usr%s", exe);
	}
}

/* The name of a dpkg .list file's package: "libc6:amd64.list" -> "libc6". */
static void list_package(const char *file, char *out, size_t size)
{
	snprintf(out, size, "%s", file);
	char *end = strstr(out, ".list");
	if (end)
		*end = '\0';
	char *arch = strchr(out, ':');
	if (arch)
		*arch = '\0';
}

/* One .list file: each line naming a wanted path (or its alias) gives it this owner. */
static int scan_list(const char *path, const char *package, json_t *wanted, json_t *exes)
{
	FILE *f = fopen(path, "r");
	char line[PATH_MAX + 2];
	int found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		const char *exe = json_string_value(json_object_get(wanted, line));
		if (!exe || !json_is_null(json_object_get(exes, exe)))
			continue;
		json_object_set_new(exes, exe,
				    json_pack("{s:s, s:s, s:s}", "manager", "dpkg", "name", package,
					      "version", ""));
		found++;
	}
	fclose(f);
	return found;
}

/* Versions of the packages found, from dpkg's status file (Package: then Version:). */
static void dpkg_versions(const char *dpkg_dir, json_t *exes)
{
	char path[PATH_MAX], line[1024], package[1024] = "";
	snprintf(path, sizeof(path), "%s/status", dpkg_dir);
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "Package: ", 9)) {
			snprintf(package, sizeof(package), "%s", line + 9);
			continue;
		}
		if (strncmp(line, "Version: ", 9) != 0)
			continue;
		const char *exe;
		json_t *owner;
		json_object_foreach(exes, exe, owner)
		{
			if (json_is_object(owner) &&
			    !strcmp(json_string_value(json_object_get(owner, "manager")), "dpkg") &&
			    !strcmp(json_string_value(json_object_get(owner, "name")), package))
				json_object_set_new(owner, "version", json_string(line + 9));
		}
	}
	fclose(f);
}

static int dpkg_owners(json_t *exes, const char *dpkg_dir)
{
	json_t *wanted = json_object(); /* a path as dpkg may list it -> the exe */
	const char *exe;
	json_t *owner;
	char alias[PATH_MAX], dir[PATH_MAX], path[PATH_MAX * 2], package[256];
	int found = 0;

	json_object_foreach(exes, exe, owner)
	{
		if (!json_is_null(owner))
			continue;
		json_object_set_new(wanted, exe, json_string(exe));
		usrmerge_alias(exe, alias, sizeof(alias));
		if (alias[0])
			json_object_set_new(wanted, alias, json_string(exe));
	}
	snprintf(dir, sizeof(dir), "%s/info", dpkg_dir);
	DIR *d = json_object_size(wanted) ? opendir(dir) : NULL;
	for (struct dirent *e; d && (e = readdir(d));) {
		size_t n = strlen(e->d_name);
		if (n < 6 || strcmp(e->d_name + n - 5, ".list") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		list_package(e->d_name, package, sizeof(package));
		found += scan_list(path, package, wanted, exes);
	}
	if (d)
		closedir(d);
	json_decref(wanted);
	if (found)
		dpkg_versions(dpkg_dir, exes);
	return found;
}

/* Does the conda record list rel (a path relative to the environment)? */
static bool record_lists(json_t *record, const char *rel)
{
	size_t i;
	json_t *f;

	json_array_foreach(json_object_get(record, "files"), i, f)
	{
		if (json_is_string(f) && !strcmp(json_string_value(f), rel))
			return true;
	}
	return false;
}

/* exe inside a conda environment (PREFIX/bin/X with PREFIX/conda-meta): its package. */
static json_t *conda_owner(const char *exe)
{
	char prefix[PATH_MAX], meta[PATH_MAX + 16], path[PATH_MAX * 2];
	struct stat st;

	snprintf(prefix, sizeof(prefix), "%s", exe);
	for (int up = 0; up < 2; up++) { /* PREFIX/bin/X: two levels up */
		char *slash = strrchr(prefix, '/');
		if (!slash || slash == prefix)
			return NULL;
		*slash = '\0';
	}
	snprintf(meta, sizeof(meta), "%s/conda-meta", prefix);
	if (stat(meta, &st) != 0 || !S_ISDIR(st.st_mode))
		return NULL;
	const char *rel = exe + strlen(prefix) + 1;
	DIR *d = opendir(meta);
	json_t *owner = NULL;
	for (struct dirent *e; d && !owner && (e = readdir(d));) {
		size_t n = strlen(e->d_name);
		if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", meta, e->d_name);
		json_t *record = json_load_file(path, 0, NULL);
		if (record && record_lists(record, rel))
			owner =
			    json_pack("{s:s, s:s?, s:s?, s:s?, s:s}", "manager", "conda", "name",
				      json_string_value(json_object_get(record, "name")), "version",
				      json_string_value(json_object_get(record, "version")),
				      "build", json_string_value(json_object_get(record, "build")),
				      "environment", prefix);
		json_decref(record);
	}
	if (d)
		closedir(d);
	return owner;
}

int pkg_owners(json_t *exes, const char *dpkg_dir)
{
	const char *exe;
	json_t *owner;
	int found = 0;

	json_object_foreach(exes, exe, owner)
	{
		json_t *conda = json_is_null(owner) ? conda_owner(exe) : NULL;
		if (conda) {
			json_object_set_new(exes, exe, conda);
			found++;
		}
	}
	return found + dpkg_owners(exes, dpkg_dir ? dpkg_dir : DPKG_DIR);
}
