#include "common/jsonutil.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s, or 0 if it is not one. */
static size_t utf8_sequence(const unsigned char *s, size_t left)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (left < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

/* Bytes at the start of s that are ASCII other than NUL: valid UTF-8 one by one. */
static size_t ascii_prefix(const char *s, size_t len)
{
	size_t n = 0;

	while (n < len && (unsigned char)s[n] - 1u < 0x7fu)
		n++;
	return n;
}

char *utf8_sanitize(const char *s, size_t len)
{
	/* Nearly every path and name is ASCII: its bytes are copied without
	 * decoding each one, and only what follows a byte above 0x7f is checked. */
	size_t plain = ascii_prefix(s, len);
	/* Each bad byte grows to 3 bytes at most. */
	char *out = malloc(plain == len ? len + 1 : len * 3 + 1);
	size_t o = plain;

	if (!out)
		return NULL;
	memcpy(out, s, plain);
	for (size_t i = plain; i < len;) {
		size_t n = utf8_sequence((const unsigned char *)s + i, len - i);
		if (n == 0 || (n == 1 && s[i] == '\0')) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(out + o, s + i, n);
		o += n;
		i += n;
	}
	out[o] = '\0';
	return out;
}

json_t *json_string_lossy(const char *s)
{
	json_t *v;
	char *clean;

	if (!s)
		return json_null();
	v = json_string(s);
	if (v)
		return v;
	clean = utf8_sanitize(s, strlen(s));
	if (!clean)
		return NULL;
	v = json_string(clean);
	free(clean);
	return v;
}

/* Room for need bytes in *buf. */
static int reserve(char **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	char *bigger = realloc(*buf, need * 2);
	if (!bigger)
		return -1;
	*buf = bigger;
	*cap = need * 2;
	return 0;
}

/*
 * Length of item if jansson would write it unchanged between quotes: printable
 * ASCII without '"' or '\\' (its escapes are for those two, control bytes and,
 * through UTF-8 checks, bytes above 0x7f). Else 0: jansson encodes it. Nearly
 * every argument is such a string, and a json_t per argument was a tenth of
 * the aggregator's instructions per process (callgrind).
 */
static size_t plain_ascii_len(const char *item)
{
	size_t n = 0;

	for (const unsigned char *c = (const unsigned char *)item; *c; c++, n++)
		if (*c < 0x20 || *c > 0x7f || *c == '"' || *c == '\\')
			return 0;
	return n;
}

/* Appends the JSON text of one string; json_dumpb() says what it needs when the room is short. */
static int append_json_string(char **buf, size_t *cap, size_t *len, const char *item)
{
	size_t plain = item ? plain_ascii_len(item) : 0;

	if (item && (plain || !item[0])) {
		if (reserve(buf, cap, *len + plain + 2) != 0)
			return -1;
		(*buf)[(*len)++] = '"';
		memcpy(*buf + *len, item, plain);
		*len += plain;
		(*buf)[(*len)++] = '"';
		return 0;
	}
	json_t *v = json_string_lossy(item);
	int rc = -1;

	if (!v)
		return -1;
	for (;;) {
		size_t need = json_dumpb(v, *buf + *len, *cap - *len, JSON_ENCODE_ANY);
		if (need == 0)
			break;
		if (need <= *cap - *len) {
			*len += need;
			rc = 0;
			break;
		}
		if (reserve(buf, cap, *len + need) != 0)
			break;
	}
	json_decref(v);
	return rc;
}

/*
 * Each string is encoded by jansson; the brackets and commas are ours. Dumping
 * a json_array instead costs jansson a loop check per container (a formatted
 * pointer key in a hash table) and a growing string buffer: a quarter of the
 * argv encoding's instructions, which run for every exec (callgrind).
 */
char *json_string_array(char *const *items, size_t n)
{
	size_t cap = 16, len = 0;
	char *buf;

	for (size_t i = 0; i < n; i++)
		cap += strlen(items[i]) + 3;
	buf = malloc(cap);
	if (!buf)
		return NULL;
	buf[len++] = '[';
	for (size_t i = 0; i < n; i++) {
		if (i && reserve(&buf, &cap, len + 1) != 0) {
			free(buf);
			return NULL;
		}
		if (i)
			buf[len++] = ',';
		if (append_json_string(&buf, &cap, &len, items[i]) != 0) {
			free(buf);
			return NULL;
		}
	}
	if (reserve(&buf, &cap, len + 2) != 0) {
		free(buf);
		return NULL;
	}
	buf[len++] = ']';
	buf[len] = '\0';
	return buf;
}
