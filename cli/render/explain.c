/* The sentence that says where a run's or a step's time went (tracer explain). */
#include "cli/render/explain.h"
#include "cli/render/jsonfield.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/render/format.h"
#include "common/character.h"

/* What the network wait was mostly for: "mostly receiving" and the like. */
static const char *net_wait_what(json_t *s)
{
	static const char *const kinds[][2] = {{"net_wait_recv_ns", "mostly receiving"},
					       {"net_wait_send_ns", "mostly sending"},
					       {"net_wait_connect_ns", "mostly connecting"},
					       {"net_wait_accept_ns", "mostly accepting"},
					       {"net_wait_poll_ns", "mostly polling sockets"}};
	const char *what = "kind unknown";
	json_int_t most = 0;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (jint(s, kinds[i][0]) > most) {
			most = jint(s, kinds[i][0]);
			what = kinds[i][1];
		}
	}
	return what;
}

void explain_run_character(json_t *r)
{
	struct time_parts t = {(uint64_t)jint(r, "cpu_ns"),	 (uint64_t)jint(r, "iowait_ns"),
			       (uint64_t)jint(r, "net_wait_ns"), (uint64_t)jint(r, "runq_ns"),
			       (uint64_t)jint(r, "reclaim_ns"),	 (uint64_t)jint(r, "sleep_ns")};
	const char *c = time_character(&t);

	json_object_set_new(r, "character", c ? json_string(c) : json_null());
}

/* Shares of the step's process time and the sentence that explains it. */
void explain_time(json_t *s)
{
	double cpu = (double)jint(s, "cpu_ns"), io = (double)jint(s, "iowait_ns");
	double runq = (double)jint(s, "runq_ns"), reclaim = (double)jint(s, "reclaim_ns");
	double sleep = (double)jint(s, "sleep_ns"), net = (double)jint(s, "net_wait_ns");
	double total = cpu + io + net + runq + reclaim + sleep;
	const char *character = jstr(s, "character");
	const char *name = jstr(s, "name_for_text")[0] ? jstr(s, "name_for_text")
			   : jstr(s, "name")[0]	       ? jstr(s, "name")
						       : jstr(s, "key");
	char text[512], a[32], b[32];

	if (total <= 0) {
		json_object_set_new(s, "explanation", json_string("no time measured"));
		return;
	}
	json_object_set_new(s, "shares",
			    json_pack("{s:f, s:f, s:f, s:f, s:f, s:f}", "cpu", cpu / total,
				      "io_wait", io / total, "network_wait", net / total,
				      "cpu_wait", runq / total, "reclaim", reclaim / total, "sleep",
				      sleep / total));
	if (!strcmp(character, "io")) {
		format_bytes((uint64_t)jint(s, "read_bytes"), a, sizeof(a));
		format_bytes((uint64_t)jint(s, "write_bytes"), b, sizeof(b));
		snprintf(text, sizeof(text),
			 "%s spent %.0f%% of its time waiting on disk I/O (read %s, wrote %s from "
			 "storage)",
			 name, 100 * io / total, a, b);
	} else if (!strcmp(character, "contended")) {
		snprintf(
		    text, sizeof(text),
		    "%s competed for CPUs: it waited for one %.0f%% of the time it was runnable "
		    "(%.1f cores used on average%s)",
		    name, 100 * runq / (runq + cpu), jnum(s, "avg_cores"),
		    jnum(s, "cpu_limit") > 0 ? ", under a CPU limit" : "");
	} else if (!strcmp(character, "memory")) {
		format_bytes((uint64_t)jint(s, "peak_rss_kb") * 1024, a, sizeof(a));
		snprintf(text, sizeof(text),
			 "%s was short of memory: %.0f%% of its time went to reclaiming memory "
			 "(peak %s%s)",
			 name, 100 * reclaim / total, a,
			 jint(s, "memory_limit_kb") > 0 ? ", under a memory limit" : "");
	} else if (!strcmp(character, "network")) {
		format_bytes((uint64_t)(jint(s, "net_rx_bytes") + jint(s, "net_tx_bytes")), a,
			     sizeof(a));
		snprintf(text, sizeof(text),
			 "%s was network-bound: blocked on the network %.0f%% of its time (%s), "
			 "moving %s",
			 name, 100 * net / total, net_wait_what(s), a);
	} else if (!strcmp(character, "mixed")) {
		snprintf(
		    text, sizeof(text),
		    "%s had no one bottleneck: %.0f%% of its time on a CPU, %.0f%% waiting for "
		    "one, %.0f%% on disk I/O, %.0f%% asleep (a lock, a pipe, a child, a timer, "
		    "the network)",
		    name, 100 * cpu / total, 100 * runq / total, 100 * io / total,
		    100 * sleep / total);
	} else if (!strcmp(character, "waiting")) {
		snprintf(text, sizeof(text),
			 "%s was mostly waiting: %.0f%% of its time neither on a CPU nor on disk "
			 "(a lock, a pipe, a child, a timer, the network)",
			 name, 100 * sleep / total);
	} else {
		char peak[32] = "";
		if (jnum(s, "peak_cores") > 0)
			snprintf(peak, sizeof(peak), " (peak %.1f)", jnum(s, "peak_cores"));
		snprintf(
		    text, sizeof(text),
		    "%s was compute-bound: %.0f%% of its time on a CPU, %.1f cores on average%s",
		    name, 100 * cpu / total, jnum(s, "avg_cores"), peak);
	}
	json_object_set_new(s, "explanation", json_string(text));
}

/* "SIGSEGV: Segmentation fault": the name people search for, and what it means. */
static void signal_words(int sig, char *out, size_t size)
{
	const char *abbrev = sigabbrev_np(sig), *text = strsignal(sig);

	snprintf(out, size, "%s%s%s", abbrev ? "SIG" : "", abbrev ? abbrev : "",
		 text ? (abbrev ? ": " : "") : "");
	size_t n = strlen(out);
	snprintf(out + n, size - n, "%s", text ? text : (abbrev ? "" : "?"));
}

void explain_exit(bool has_signal, int code, char *out, size_t size)
{
	char words[96];

	if (has_signal) {
		signal_words(code, words, sizeof(words));
		snprintf(out, size, "killed by signal %d (%s)%s", code, words,
			 code == SIGKILL ? ": by the OOM killer, a timeout or a user" : "");
		return;
	}
	const char *meaning =
	    code == 0	  ? "success"
	    : code == 1	  ? "a general failure"
	    : code == 2	  ? "a usage error or a missing input (most tools)"
	    : code == 126 ? "the command could not run: not executable or no permission"
	    : code == 127 ? "the command was not found"
	    : code > 128 && code < 160
		? "a shell reporting its child was killed by a signal (128 + signal)"
		: "a failure the tool defines";
	snprintf(out, size, "exit code %d: %s", code, meaning);
	if (code > 128 && code < 160) {
		size_t n = strlen(out);
		signal_words(code - 128, words, sizeof(words));
		snprintf(out + n, size - n, " %d (%s)", code - 128, words);
	}
}

void explain_process_end(const json_t *p, char *out, size_t size)
{
	bool has_signal = json_is_integer(json_object_get(p, "signal"));
	int code = (int)json_integer_value(json_object_get(p, has_signal ? "signal" : "exit_code"));
	json_int_t sender = json_integer_value(json_object_get(p, "killed_by_pid"));
	const char *sender_comm = json_string_value(json_object_get(p, "killed_by_comm"));
	bool oom = json_integer_value(json_object_get(p, "oom_killed")) != 0;

	if (has_signal && (sender || oom)) {
		/* Who did it is known: no guessing at SIGKILL's usual senders. */
		char words[96];
		signal_words(code, words, sizeof(words));
		if (oom)
			snprintf(out, size, "killed by signal %d (%s), chosen by the OOM killer",
				 code, words);
		else
			snprintf(out, size, "killed by signal %d (%s), sent by %s (pid %lld)", code,
				 words, sender_comm ? sender_comm : "?", (long long)sender);
		return;
	}
	explain_exit(has_signal, code, out, size);
	/* A shell's own status is no tool's: its script's `exit N`, or a builtin's. */
	const char *exe = json_string_value(json_object_get(p, "exe"));
	const char *base = exe && strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	static const char *const shells[] = {"bash", "sh", "dash", "zsh", "ksh", "mksh", "busybox"};
	bool shell = false;
	for (size_t i = 0; base && i < sizeof(shells) / sizeof(*shells); i++)
		shell = shell || !strcmp(base, shells[i]);
	const char *generic = ": a failure the tool defines";
	char *at = strstr(out, generic);
	if (shell && !has_signal && at)
		snprintf(at, size - (size_t)(at - out),
			 ": set by the shell script itself (its `exit %d` or a builtin's)", code);
}
