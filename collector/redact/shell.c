/*
 * Shell strings (`bash -c '...'`, `ssh host '...'`, ProxyCommand=...): each
 * word gets the rules an argument gets, with its own command's tool and the
 * words before it; quoted strings inside are read as the inner shell reads
 * them; what echo or printf pipe into a reader of secrets (`sudo -S`,
 * `docker login --password-stdin`, redact.rules' stdin rules) and a here-string
 * given to one (`<<< X`) are secrets.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "bpf/events.h" /* TRACER_ARGV_MAX */
#include "collector/redact/internal.h"
#include "common/fileutil.h"

static bool is_shell_separator(char c)
{
	return c == ';' || c == '|' || c == '&' || c == '(' || c == ')' || c == '\n' || c == '`';
}

/*
 * A quoted shell string inside a shell string (`bash -c 'sh -c "mysql -pX"'`,
 * `ssh h 'sudo -u app sh -c "..."'`): the inner shell sees the word with its
 * quotes removed and its escapes undone, so that is what its words are read
 * from; what they hide is mapped back onto the quoted word.
 */
void find_nested_words(const struct redact_rules *r, const char *word, size_t len, struct spans *sp,
		       int depth)
{
	char inner[TRACER_ARGV_MAX];
	uint16_t at[TRACER_ARGV_MAX]; /* inner[k] is word[at[k]] */
	size_t n = 0;
	char quote = 0;
	bool nested = false;

	if (depth >= NEST_MAX || len > sizeof(inner))
		return;
	size_t q = 0;
	while (q < len && word[q] != '\'' && word[q] != '"' && word[q] != '\\')
		q++;
	if (q == len)
		return; /* unquoted: it ended at the first space, so it holds no command */
	for (size_t i = 0; i < len; i++) {
		char c = word[i];
		if (!quote && c == '$' && i + 1 < len && word[i + 1] == '\'') {
			quote = '$'; /* $'...': bash's quotes with C escapes */
			i++;
			continue;
		}
		if (c == '\\' && quote != '\'' && i + 1 < len &&
		    (!quote || quote == '$' || strchr("\"\\$`", word[i + 1]))) {
			c = word[++i]; /* inside double quotes only these are escapes */
			if (quote == '$' && (c == 'n' || c == 't'))
				c = c == 'n' ? '\n' : '\t';
		} else if (quote ? c == quote || (quote == '$' && c == '\'')
				 : (c == '\'' || c == '"')) {
			quote = quote ? 0 : c;
			continue;
		}
		nested |= isspace((unsigned char)c) || is_shell_separator(c);
		inner[n] = c;
		at[n++] = (uint16_t)i;
	}
	if (!nested)
		return; /* one word: the caller's rules have seen it all */
	struct spans found;
	spans_clear(&found);
	find_shell_words(r, inner, n, &found, depth + 1);
	for (unsigned k = 0; k < found.n; k++) {
		size_t s = found.s[k].start, e = found.s[k].end;
		if (e > s)
			add_span(sp, at[s], (size_t)at[e - 1] + 1);
	}
	if (found.overflow)
		add_span(sp, 0, len);
}

/* The words of one command of a shell string, and what it is given on stdin. */
struct shell_cmd {
	struct command c;
	char prev[KEY_MAX + 1], prev2[KEY_MAX + 1];
	bool at_command;
	bool feeding;		     /* echo or printf: its words may be piped on */
	size_t feed_start, feed_end; /* those words */
	size_t here_start, here_end; /* a <<< word */
	size_t last_start, last_end; /* the last word that is no option */
	bool here_next;		     /* the word after <<< is it */
	bool redirect_next;	     /* the word after > or < is a file */
};

static void shell_cmd_reset(struct shell_cmd *s, const struct redact_rules *r)
{
	command_start(&s->c, r, "");
	s->prev[0] = s->prev2[0] = '\0';
	s->at_command = true;
	s->feeding = s->here_next = s->redirect_next = false;
	s->feed_start = s->feed_end = s->here_start = s->here_end = 0;
	s->last_start = s->last_end = 0;
}

static void remember(struct shell_cmd *s, const char *word, size_t n)
{
	memcpy(s->prev2, s->prev, strlen(s->prev) + 1);
	memcpy(s->prev, word, n + 1);
}

/* The command ends: a reader of secrets loses its here-string; a feeder piped
 * into one (its words spanned in *fed) loses its words. */
static void shell_cmd_end(struct shell_cmd *s, const struct redact_rules *r, struct spans *sp,
			  struct span *fed)
{
	if (s->last_end > s->last_start && command_last_is_secret(&s->c, r))
		add_span(sp, s->last_start, s->last_end);
	if (!s->c.reads_secret)
		return;
	if (s->here_end > s->here_start)
		add_span(sp, s->here_start, s->here_end);
	if (fed->end > fed->start)
		add_span(sp, fed->start, fed->end);
}

/* Where the word starting at i ends, quotes and escapes read as the shell does. */
static size_t word_end(const char *arg, size_t i, size_t len)
{
	char quote = 0;

	while (i < len &&
	       (quote || (!isspace((unsigned char)arg[i]) && !is_shell_separator(arg[i])))) {
		if (arg[i] == '\\' && quote != '\'' && i + 1 < len) {
			i += 2; /* \" does not end a quote, \; does not end a word */
			continue;
		}
		if (quote ? arg[i] == quote : (arg[i] == '\'' || arg[i] == '"'))
			quote = quote ? 0 : arg[i];
		i++;
	}
	return i;
}

/* Which command this word starts, if any; echo and printf feed what follows. */
static bool shell_see_command(struct shell_cmd *s, const struct redact_rules *r, const char *word)
{
	const char *eq = s->at_command ? strchr(word, '=') : NULL;
	const char *tool = NULL;

	if (eq && (word[0] == '-' || strncasecmp(word, "proxycommand=", 13) == 0))
		tool = path_basename(eq + 1); /* ssh -o ProxyCommand=CMD, sbatch --wrap="CMD" */
	else if ((s->at_command && !eq) || ((rules_name_tool(r, path_basename(word)) ||
					     !strcmp(word, "git") || !strcmp(word, "sqlplus")) &&
					    !rules_name_subcommand(r, s->c.tool, word)))
		tool = path_basename(word);
	if (!tool)
		return false;
	if (s->at_command)
		command_start(&s->c, r, tool);
	else
		command_switch(&s->c, r, tool);
	s->at_command = false;
	s->feeding = !strcmp(tool, "echo") || !strcmp(tool, "printf");
	return true;
}

static void shell_word(struct shell_cmd *s, const struct redact_rules *r, const char *arg,
		       size_t start, size_t end, struct spans *sp, int depth)
{
	char word[KEY_MAX + 1];
	size_t ws = start, we = end;

	if (we - ws >= 2 && (arg[ws] == '\'' || arg[ws] == '"') && arg[we - 1] == arg[ws]) {
		ws++; /* 'secret': the quotes are the word's, not the secret's */
		we--;
	}
	if (we == ws) { /* '': an empty value still stands in its place */
		remember(s, "''", 2);
		return;
	}
	size_t n = we - ws < KEY_MAX ? we - ws : KEY_MAX;
	memcpy(word, arg + ws, n);
	word[n] = '\0';
	bool is_tool = shell_see_command(s, r, word);
	if (s->here_next || (n > 3 && !memcmp(word, "<<<", 3))) {
		s->here_start = s->here_next ? start : start + 3;
		s->here_end = end;
	}
	s->here_next = n == 3 && !memcmp(word, "<<<", 3);
	if (s->feeding && !is_tool) {
		if (s->feed_end == 0)
			s->feed_start = start;
		s->feed_end = end;
	}
	struct spans inner, nested;
	spans_clear(&inner);
	spans_clear(&nested);
	find_word_secrets(r, &s->c, s->prev2[0] ? s->prev2 : NULL, s->prev[0] ? s->prev : NULL,
			  arg + ws, we - ws, &inner, -1);
	add_spans_at(sp, &inner, ws, start, end);
	find_nested_words(r, arg + start, end - start, &nested, depth);
	add_spans_at(sp, &nested, start, start, end); /* quotes and all */
	/* > out, 2>/dev/null, < in: redirections, not the command's words */
	bool redirect = strchr("<>", word[0]) ||
			(isdigit((unsigned char)word[0]) && n > 1 && strchr("<>", word[1]));
	bool target = s->redirect_next;
	s->redirect_next = redirect && strspn(word, "0123456789<>&|") == n;
	if (!is_tool) {
		command_see(&s->c, r, word, n);
		if ((word[0] != '-' || n == 1) && !redirect && !target) {
			s->last_start = start;
			s->last_end = end;
		}
	} else {
		s->c.at_tool = false; /* the tool's name is behind */
	}
	remember(s, word, n);
}

void find_shell_words(const struct redact_rules *r, const char *arg, size_t len, struct spans *sp,
		      int depth)
{
	struct shell_cmd s;
	struct span fed = {0, 0}; /* what echo or printf piped into this command */
	size_t i = 0;

	shell_cmd_reset(&s, r);
	while (i < len) {
		/* A newline ends a command, like ';': it is no mere space. */
		while (i < len && isspace((unsigned char)arg[i]) && arg[i] != '\n')
			i++;
		if (i < len && is_shell_separator(arg[i])) {
			bool pipe = arg[i] == '|' && (i + 1 >= len || arg[i + 1] != '|') &&
				    (i == 0 || arg[i - 1] != '|');
			shell_cmd_end(&s, r, sp, &fed);
			fed = (struct span){0, 0};
			if (pipe && s.feeding)
				fed = (struct span){s.feed_start, s.feed_end};
			shell_cmd_reset(&s, r);
			i++;
			continue;
		}
		size_t start = i;
		i = word_end(arg, i, len);
		if (i > start)
			shell_word(&s, r, arg, start, i, sp, depth);
		else
			i++;
	}
	shell_cmd_end(&s, r, sp, &fed);
}

static bool has_shell_words(const char *arg, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (arg[i] == ' ' || arg[i] == '\t' || arg[i] == '\n' || arg[i] == ';' ||
		    arg[i] == '|' || arg[i] == '&')
			return true;
	return false;
}

void find_word_secrets(const struct redact_rules *r, const struct command *c, const char *prev2,
		       const char *prev, const char *word, size_t len, struct spans *sp, int depth)
{
	long from = word_structural_secret(r, c, prev2, prev, word, len);

	if (from >= 0) {
		add_span(sp, (size_t)from, len);
		return;
	}
	find_secrets(word, len, sp);
	find_oracle_login(c->tool, word, len, sp);
	/* An argument that is a shell string; a shell string's own words have
	 * find_nested_words for that (depth -1). */
	if (depth >= 0 && has_shell_words(word, len))
		find_shell_words(r, word, len, sp, depth);
}
