/* One HTTP POST with libcurl: TLS verified, timeouts, Retry-After read back. */
#ifndef TRACER_SHIPPER_HTTP_H
#define TRACER_SHIPPER_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct http_options {
	const char *ca_file;	     /* NULL: the system's CAs */
	const char *user, *password; /* basic auth, or NULL */
	const char *bearer;	     /* Authorization: Bearer, or NULL */
	long timeout_ms, connect_timeout_ms;
};

struct http_result {
	long status;	     /* 0: no answer (transport error) */
	char error[256];     /* transport error text */
	char body[2048];     /* the start of the answer */
	long retry_after_ms; /* -1: none given */
};

struct http_client;

struct http_client *http_new(const struct http_options *o);
void http_free(struct http_client *c);
/* The delay a "Retry-After: ..." header line asks for (seconds or an HTTP date,
 * at most a day), or -1 if the line is not one. */
long http_retry_after_ms(const char *header_line, size_t len);
/* POSTs body (already encoded) with extra header lines. */
void http_post(struct http_client *c, const char *url, const char *const *headers, const void *body,
	       size_t len, struct http_result *out);

#endif
