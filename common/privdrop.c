#include "common/privdrop.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common/log.h"

/* "UID:GID" for ids of no account: a uid that no other process holds. */
static int lookup_ids(const char *user, struct run_as *out)
{
	char *end;
	unsigned long uid = strtoul(user, &end, 10), gid;

	if (end == user || *end != ':')
		return -1;
	gid = strtoul(end + 1, &end, 10);
	if (*end || !uid || !gid || uid > 4294967294UL || gid > 4294967294UL ||
	    getpwuid((uid_t)uid))
		return -1;
	*out = (struct run_as){.uid = (uid_t)uid, .gid = (gid_t)gid, .no_account = true};
	snprintf(out->name, sizeof(out->name), "%lu:%lu", uid, gid);
	return 0;
}

int run_as_lookup(const char *user, struct run_as *out)
{
	struct passwd *pw = getpwnam(user);
	char *end;

	if (!pw && strchr(user, ':'))
		return lookup_ids(user, out);

	if (!pw) {
		unsigned long uid = strtoul(user, &end, 10);
		if (*user && *end == '\0')
			pw = getpwuid((uid_t)uid);
	}
	if (!pw)
		return -1;
	out->uid = pw->pw_uid;
	out->gid = pw->pw_gid;
	out->extra_group = 0;
	out->no_account = false;
	snprintf(out->name, sizeof(out->name), "%s", pw->pw_name);
	return 0;
}

/*
 * An empty bounding set: nothing this process could ever execute may gain a
 * capability. Needs CAP_SETPCAP; without it the set stays as it is, which
 * no_new_privs and the uid change already make harmless.
 */
void privdrop_empty_bounding_set(void)
{
	for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++) {
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1 &&
		    prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
			log_debug("the capability bounding set stays: %s", strerror(errno));
			return;
		}
	}
}

static int add_group(gid_t extra)
{
	gid_t groups[256];
	int n = getgroups(255, groups);

	if (n < 0) {
		log_error("getgroups: %s", strerror(errno));
		return -1;
	}
	groups[n++] = extra;
	if (setgroups((size_t)n, groups) != 0) {
		log_error("setgroups(+%u): %s", (unsigned)extra, strerror(errno));
		return -1;
	}
	return 0;
}

int run_as_needed(const char *user)
{
	if (geteuid() != 0)
		return 0;
	if (!user) {
		log_error("refusing to run as root: pass --user NAME");
		return -1;
	}
	return 1;
}

int drop_privileges(const struct run_as *who)
{
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;

	if (geteuid() != 0) {
		if (geteuid() == who->uid)
			goto no_new_privs;
		log_error("cannot become %s: not running as root", who->name);
		return -1;
	}
	privdrop_empty_bounding_set();
	if (who->no_account ? setgroups(0, NULL) != 0 : initgroups(who->name, who->gid) != 0) {
		log_error("initgroups(%s): %s", who->name, strerror(errno));
		return -1;
	}
	if (who->extra_group && add_group(who->extra_group) != 0)
		return -1;
	if (setresgid(who->gid, who->gid, who->gid) != 0) {
		log_error("setresgid(%u): %s", (unsigned)who->gid, strerror(errno));
		return -1;
	}
	if (setresuid(who->uid, who->uid, who->uid) != 0) {
		log_error("setresuid(%u): %s", (unsigned)who->uid, strerror(errno));
		return -1;
	}
	if (getresuid(&ruid, &euid, &suid) != 0 || getresgid(&rgid, &egid, &sgid) != 0 ||
	    ruid != who->uid || euid != who->uid || suid != who->uid || rgid != who->gid ||
	    egid != who->gid || sgid != who->gid) {
		log_error("privilege drop to %s did not take effect", who->name);
		return -1;
	}
	/* Must be impossible now; if it works, we are not safe to continue. */
	if (who->uid != 0 && (setuid(0) == 0 || seteuid(0) == 0)) {
		log_error("regained root after dropping to %s", who->name);
		return -1;
	}
no_new_privs:
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		log_error("PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return -1;
	}
	return 0;
}
