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

char *utf8_sanitize(const char *s, size_t len)
{
	/* Each bad byte grows to 3 bytes at most. */
	char *out = malloc(len * 3 + 1);
	size_t o = 0;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len;) {
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

char *json_string_array(char *const *items, size_t n)
{
	json_t *arr = json_array();
	char *text;

	if (!arr)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		json_t *v = json_string_lossy(items[i]);
		if (!v || json_array_append_new(arr, v) != 0) {
			json_decref(arr);
			return NULL;
		}
	}
	text = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	return text;
}
