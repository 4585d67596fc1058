/* Exit status decoding, against statuses the kernel really produced. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/exitstatus.h"

/* Runs a child that ends the given way and returns the raw wait status. */
static int real_status(int code, int sig)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		struct rlimit no_core = {0, 0};
		setrlimit(RLIMIT_CORE, &no_core);
		if (sig) {
			signal(sig,
			       SIG_DFL); /* cmocka catches some signals; we want the real death */
			raise(sig);
		}
		_exit(code);
	}
	waitpid(pid, &status, 0);
	return status;
}

static void test_exit_codes(void **state)
{
	int codes[] = {0, 1, 2, 3, 127, 255};

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		int raw = real_status(codes[i], 0);
		struct exit_status st = exit_status_decode(raw);
		assert_true(st.exited);
		assert_int_equal(st.code, WEXITSTATUS(raw));
		assert_int_equal(st.code, codes[i]);
		assert_int_equal(exit_status_shell(st), codes[i]);
	}
}

static void test_signals(void **state)
{
	int sigs[] = {SIGKILL, SIGTERM, SIGINT, SIGSEGV};

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		int raw = real_status(0, sigs[i]);
		struct exit_status st = exit_status_decode(raw);
		assert_false(st.exited);
		assert_true(WIFSIGNALED(raw));
		assert_int_equal(st.signal, WTERMSIG(raw));
		assert_int_equal(st.core_dumped, WCOREDUMP(raw) != 0);
		assert_int_equal(exit_status_shell(st), 128 + sigs[i]);
	}
}

static void test_core_flag(void **state)
{
	/* 0x80 is the core-dump bit of a raw status. */
	struct exit_status st = exit_status_decode(SIGSEGV | 0x80);
	assert_false(st.exited);
	assert_int_equal(st.signal, SIGSEGV);
	assert_true(st.core_dumped);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exit_codes),
	    cmocka_unit_test(test_signals),
	    cmocka_unit_test(test_core_flag),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
