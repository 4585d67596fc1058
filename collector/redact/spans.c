/* The secrets found in an argument, as byte ranges, and the argument written
 * without them. */
#include <string.h>

#include "collector/redact/internal.h"

/* Not `= {0}`: that zeroes all MAX_SPANS slots, for every word of a shell string. */
void spans_clear(struct spans *sp)
{
	sp->n = 0;
	sp->overflow = false;
}

void add_span(struct spans *sp, size_t start, size_t end)
{
	if (end <= start)
		end = start; /* an empty secret still becomes REDACTED */
	if (sp->n == MAX_SPANS) {
		sp->overflow = true;
		return;
	}
	sp->s[sp->n].start = start;
	sp->s[sp->n].end = end;
	sp->n++;
}

void add_spans_at(struct spans *sp, const struct spans *src, size_t offset, size_t ostart,
		  size_t oend)
{
	for (unsigned k = 0; k < src->n; k++)
		if (src->s[k].end > src->s[k].start) /* a word's empty value: no secret */
			add_span(sp, offset + src->s[k].start, offset + src->s[k].end);
	if (src->overflow)
		add_span(sp, ostart, oend);
}

static void sort_spans(struct spans *sp)
{
	for (unsigned i = 1; i < sp->n; i++) {
		struct span key = sp->s[i];
		unsigned j = i;
		while (j > 0 && sp->s[j - 1].start > key.start) {
			sp->s[j] = sp->s[j - 1];
			j--;
		}
		sp->s[j] = key;
	}
}

size_t write_redacted(const char *arg, size_t len, struct spans *sp, char *out, size_t cap)
{
	size_t o = 0, pos = 0;

	sort_spans(sp);
	for (unsigned i = 0; i <= sp->n; i++) {
		size_t copy_end = i < sp->n ? sp->s[i].start : len;
		if (copy_end > pos) {
			if (o + (copy_end - pos) >= cap)
				return 0;
			memcpy(out + o, arg + pos, copy_end - pos);
			o += copy_end - pos;
			pos = copy_end;
		}
		if (i == sp->n)
			break;
		if (sp->s[i].end < pos)
			continue; /* inside an earlier span */
		if (o + sizeof(REDACTED) - 1 >= cap)
			return 0;
		if (sp->s[i].start >= pos) {
			memcpy(out + o, REDACTED, sizeof(REDACTED) - 1);
			o += sizeof(REDACTED) - 1;
		}
		pos = sp->s[i].end;
	}
	if (o >= cap)
		return 0;
	out[o++] = '\0';
	return o;
}
