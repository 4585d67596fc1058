/*
 * The collector key: the proof a collector sends is accepted for its key
 * only (one flipped bit, a wrong length or magic is refused); a key file is
 * made private and read back the same, two makers end up with one key, and a
 * file others could read, of the wrong size or behind a symlink is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/ipc_auth.h"

static char dir[64], path[128];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test-ipc-auth-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/collector.key", dir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static void test_proof_is_the_key_and_nothing_else(void **state)
{
	uint8_t key[IPC_KEY_LEN], auth[IPC_AUTH_LEN], other[IPC_AUTH_LEN + 1];
	(void)state;

	for (int i = 0; i < IPC_KEY_LEN; i++)
		key[i] = (uint8_t)(i * 7 + 1);
	ipc_auth_pack(key, auth);
	assert_true(ipc_auth_check(auth, sizeof(auth), key));
	for (size_t bit = 0; bit < 8 * sizeof(auth); bit++) {
		memcpy(other, auth, sizeof(auth));
		other[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_false(ipc_auth_check(other, sizeof(auth), key));
	}
	memcpy(other, auth, sizeof(auth));
	other[IPC_AUTH_LEN] = 0;
	assert_false(ipc_auth_check(other, sizeof(other), key));
	assert_false(ipc_auth_check(auth, sizeof(auth) - 1, key));
	assert_false(ipc_auth_check(key, sizeof(key), key)); /* the bare key: no magic */
}

static void test_key_file_made_private_and_shared(void **state)
{
	uint8_t a[IPC_KEY_LEN], b[IPC_KEY_LEN], zero[IPC_KEY_LEN] = {0};
	char err[512];
	struct stat st;
	(void)state;

	assert_int_not_equal(ipc_key_load_file(path, false, a, err, sizeof(err)), 0);
	assert_int_equal(ipc_key_load_file(path, true, a, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_size, IPC_KEY_LEN);
	assert_memory_not_equal(a, zero, IPC_KEY_LEN);
	/* A second maker finds the first one's key. */
	assert_int_equal(ipc_key_load_file(path, true, b, err, sizeof(err)), 0);
	assert_memory_equal(a, b, IPC_KEY_LEN);
}

static void test_key_file_others_can_read_is_refused(void **state)
{
	uint8_t key[IPC_KEY_LEN];
	char err[512], link_path[160];
	(void)state;

	assert_int_equal(ipc_key_load_file(path, true, key, err, sizeof(err)), 0);
	assert_int_equal(chmod(path, 0604), 0);
	assert_int_not_equal(ipc_key_load_file(path, false, key, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "no one else can read"));
	assert_int_equal(chmod(path, 0620), 0); /* group-writable */
	assert_int_not_equal(ipc_key_load_file(path, false, key, err, sizeof(err)), 0);
	assert_int_equal(chmod(path, 0600), 0);
	snprintf(link_path, sizeof(link_path), "%s/link.key", dir);
	assert_int_equal(symlink(path, link_path), 0);
	assert_int_not_equal(ipc_key_load_file(link_path, false, key, err, sizeof(err)), 0);
	assert_int_equal(truncate(path, IPC_KEY_LEN - 1), 0);
	assert_int_not_equal(ipc_key_load_file(path, false, key, err, sizeof(err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_proof_is_the_key_and_nothing_else),
	    cmocka_unit_test_setup_teardown(test_key_file_made_private_and_shared, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_key_file_others_can_read_is_refused, setup,
					    teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
