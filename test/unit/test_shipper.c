/* Shipper pieces: retry policy, backoff with full jitter, gzip, the credentials file. */
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
#include <zlib.h>

#include "shipper/credentials.h"
#include "shipper/gzip.h"
#include "shipper/retry.h"

static void test_retryable(void **state)
{
	(void)state;
	assert_true(status_retryable(0)); /* no answer */
	assert_true(status_retryable(500));
	assert_true(status_retryable(503));
	assert_true(status_retryable(408));
	assert_true(status_retryable(429));
	assert_false(status_retryable(400));
	assert_false(status_retryable(401));
	assert_false(status_retryable(413));
}

static void test_backoff(void **state)
{
	struct backoff b;
	(void)state;
	backoff_init(&b, 500, 60000, 7);
	/* Full jitter: attempt k waits in [0, min(cap, base x 2^k)]. */
	for (unsigned k = 0; k < 12; k++) {
		long ceiling = 500L << k;
		if (ceiling > 60000)
			ceiling = 60000;
		long d = backoff_next(&b, -1);
		assert_true(d >= 0 && d <= ceiling);
	}
	/* Retry-After wins, capped at an hour. */
	assert_int_equal(backoff_next(&b, 2000), 2000);
	assert_int_equal(backoff_next(&b, 10 * 3600 * 1000L), 3600000);
	backoff_reset(&b);
	assert_true(backoff_next(&b, -1) <= 500);
}

static void test_gzip_roundtrip(void **state)
{
	char text[5000];
	unsigned char back[6000];
	size_t zlen;
	(void)state;
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (char)('a' + i % 7);
	unsigned char *z = gzip_compress(text, sizeof(text), &zlen);
	assert_non_null(z);
	assert_true(zlen < sizeof(text) && z[0] == 0x1f && z[1] == 0x8b); /* gzip magic */
	z_stream s = {0};
	assert_int_equal(inflateInit2(&s, 15 + 16), Z_OK);
	s.next_in = z;
	s.avail_in = (uInt)zlen;
	s.next_out = back;
	s.avail_out = sizeof(back);
	assert_int_equal(inflate(&s, Z_FINISH), Z_STREAM_END);
	assert_int_equal(s.total_out, sizeof(text));
	assert_memory_equal(back, text, sizeof(text));
	inflateEnd(&s);
	free(z);
}

static void test_credentials(void **state)
{
	char path[64], err[256];
	struct credentials c;
	(void)state;
	snprintf(path, sizeof(path), "/tmp/tracer-cred-%d", (int)getpid());
	FILE *f = fopen(path, "w");
	fputs("user = tracer\npassword = p@ss word\n", f);
	fclose(f);
	chmod(path, 0644);
	assert_int_equal(credentials_load(path, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "0600"));
	chmod(path, 0600);
	assert_int_equal(credentials_load(path, &c, err, sizeof(err)), 0);
	assert_string_equal(c.user, "tracer");
	assert_string_equal(c.password, "p@ss word");
	credentials_wipe(&c);
	assert_int_equal(c.user[0], 0);
	f = fopen(path, "w");
	fputs("user = tracer\nsecret = x\n", f);
	fclose(f);
	assert_int_equal(credentials_load(path, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ":2:"));
	unlink(path);
	assert_int_equal(credentials_load(path, &c, err, sizeof(err)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_retryable),
	    cmocka_unit_test(test_backoff),
	    cmocka_unit_test(test_gzip_roundtrip),
	    cmocka_unit_test(test_credentials),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
