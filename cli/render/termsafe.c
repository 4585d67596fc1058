#include "cli/render/termsafe.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/*
 * Ours: the severity colours and their reset, written as TERMSAFE_MARK and a
 * letter. 0xFF never occurs in UTF-8, and the database holds only UTF-8, so
 * no text from it can produce one; every ESC that reaches the filter is data.
 */
static const struct {
	char letter;
	const char *sequence;
} own_sequences[] = {{'0', "\033[0m"}, {'r', "\033[1;31m"}, {'y', "\033[33m"}, {'c', "\033[36m"}};

struct sink {
	char *out;
	size_t n;
};

static void put(struct sink *s, char c)
{
	s->out[s->n++] = c;
}

static void take(struct termsafe_state *st, unsigned char b, struct sink *s);

/* A mark and what follows it: one of our sequences, or a '?' and the byte as itself. */
static void take_after_mark(struct termsafe_state *st, unsigned char b, struct sink *s)
{
	st->n_held = 0;
	for (size_t i = 0; i < sizeof(own_sequences) / sizeof(*own_sequences); i++)
		if (own_sequences[i].letter == (char)b) {
			for (const char *q = own_sequences[i].sequence; *q; q++)
				put(s, *q);
			return;
		}
	put(s, '?');
	take(st, b, s);
}

static void take(struct termsafe_state *st, unsigned char b, struct sink *s)
{
	if (st->n_held && st->held[0] == (char)0xFF) {
		take_after_mark(st, b, s);
		return;
	}
	if (st->n_held && st->held[0] == '\r') { /* CSV's line end; alone, it rewrites a line */
		st->n_held = 0;
		put(s, b == '\n' ? '\r' : '?');
	}
	if (st->n_held) { /* a held 0xC2: U+0080..U+009F are the C1 controls */
		st->n_held = 0;
		if (b >= 0x80 && b <= 0x9F) {
			put(s, '?');
			put(s, '?');
			return;
		}
		put(s, (char)0xC2);
		st->continuation = 1;
	}
	if (b == 0xFF || b == '\r') {
		st->held[0] = (char)b;
		st->n_held = 1;
		st->continuation = 0;
	} else if (b < 0x20 || b == 0x7F) {
		put(s, b == '\n' || b == '\t' ? (char)b : '?');
		st->continuation = 0;
	} else if (b < 0x80) {
		put(s, (char)b);
		st->continuation = 0;
	} else if (b <= 0xBF) { /* a continuation byte: only after its lead */
		put(s, st->continuation > 0 ? (char)b : '?');
		st->continuation = st->continuation > 0 ? st->continuation - 1 : 0;
	} else if (b == 0xC2) {
		st->held[0] = (char)b;
		st->n_held = 1;
	} else {
		int follow = b >= 0xC3 && b <= 0xDF   ? 1
			     : b >= 0xE0 && b <= 0xEF ? 2
			     : b >= 0xF0 && b <= 0xF4 ? 3
						      : -1;
		put(s, follow < 0 ? '?' : (char)b);
		st->continuation = follow < 0 ? 0 : follow;
	}
}

size_t termsafe_filter(struct termsafe_state *st, const char *in, size_t n, char *out)
{
	struct sink s = {out, 0};

	for (size_t i = 0; i < n; i++)
		take(st, (unsigned char)in[i], &s);
	if (n == 0 && st->n_held) { /* the end: nothing more can complete it */
		st->n_held = 0;
		put(&s, '?');
	}
	return s.n;
}

struct termsafe {
	int fd;
	struct termsafe_state st;
};

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static ssize_t termsafe_write(void *cookie, const char *buf, size_t size)
{
	struct termsafe *t = cookie;
	char out[4096 + sizeof(t->st.held)];

	for (size_t done = 0; done < size;) {
		size_t chunk = size - done < 4096 ? size - done : 4096;
		size_t n = termsafe_filter(&t->st, buf + done, chunk, out);
		if (write_all(t->fd, out, n) != 0)
			return done ? (ssize_t)done : -1;
		done += chunk;
	}
	return (ssize_t)size;
}

static int termsafe_close(void *cookie)
{
	struct termsafe *t = cookie;
	char out[2 * sizeof(t->st.held)];
	size_t n = termsafe_filter(&t->st, NULL, 0, out);

	return write_all(t->fd, out, n);
}

static bool stdout_filtered;

FILE *termsafe_open(int fd)
{
	/* One per standard stream, never closed before exit: static, not leaked. */
	static struct termsafe streams[3];
	static bool taken[3];
	cookie_io_functions_t io = {.write = termsafe_write, .close = termsafe_close};

	if (fd < 1 || fd > 2 || taken[fd])
		return NULL;
	struct termsafe *t = &streams[fd];
	t->fd = fd;
	FILE *f = fopencookie(t, "w", io);
	if (!f)
		return NULL;
	taken[fd] = true;
	stdout_filtered |= fd == STDOUT_FILENO;
	setvbuf(f, NULL, isatty(fd) ? _IOLBF : _IOFBF, BUFSIZ);
	return f;
}

bool termsafe_stdout(void)
{
	return stdout_filtered;
}
