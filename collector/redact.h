/*
 * Secret redaction for argv, applied in the collector before anything leaves
 * it. Rules (docs/security.md has the full list with examples):
 *  - a value after a sensitive flag: --password=X, --token X, -p X for tools
 *    known to take a password that way (mysql -pX, sshpass -p X)
 *  - sensitive KEY=VALUE pairs anywhere in an argument, including query
 *    strings and comma lists: AWS_SECRET_ACCESS_KEY=X, a?token=X&sig=Y
 *  - credentials in URLs: scheme://user:X@host, https://X@host
 *  - HTTP headers: "Authorization: X", "Cookie: X"
 *  - openssl style pass:X
 *  - key options (--account-key X, AccountKey=X), `secrets set NAME X`
 *  - token shapes (ghp_, sk_live_, hvs., JWTs) and webhook URLs' paths
 * Over-redaction is preferred to a leak.
 */
#ifndef TRACER_REDACT_H
#define TRACER_REDACT_H

#include <stddef.h>

#define REDACTED "***"

/* Is this option or variable name one that carries a secret? */
int redact_key_is_sensitive(const char *key, size_t len);

/*
 * Redacts argc arguments into out (NUL-separated, out_size bytes), pointing
 * out_argv[i] at each result. An argument that does not fit is replaced by
 * REDACTED entirely. Returns the number of redactions made.
 */
unsigned redact_argv(char *const *argv, unsigned argc, char *out, size_t out_size, char **out_argv);

#endif
