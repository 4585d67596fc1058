/*
 * Token formats, wherever they stand: an argument, a header, a code string, a
 * URL. Each is known by its prefix and, where the prefix is common in words
 * (sk-, SG., npm_), by its length and its mix of letters and digits. Also AWS
 * secret access keys (40 characters of base64 with no prefix at all) and PEM
 * private keys.
 */
#include <ctype.h>
#include <string.h>

#include "collector/redact/internal.h"

static bool starts_with(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && strncmp(s, prefix, n) == 0;
}

static bool is_token_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.' || c == '+' ||
	       c == '/' || c == '=';
}

struct token_shape {
	const char *prefix;
	unsigned char exact; /* the token's whole length, or 0: at least `least` */
	unsigned char least; /* 0: 16 */
	unsigned char dots;  /* as many dots at least: JWTs two, SendGrid two */
	bool mixed;	     /* letters and digits after the prefix: sk-, npm_ */
};
static const struct token_shape token_shapes[] = {
    /* GitHub, GitLab */
    {"ghp_", 0, 0, 0, false},
    {"gho_", 0, 0, 0, false},
    {"ghu_", 0, 0, 0, false},
    {"ghs_", 0, 0, 0, false},
    {"ghr_", 0, 0, 0, false},
    {"github_pat_", 0, 0, 0, false},
    {"glpat-", 0, 0, 0, false},
    {"glrt-", 0, 0, 0, false},
    {"gldt-", 0, 0, 0, false},
    {"glptt-", 0, 0, 0, false},
    /* Slack */
    {"xoxb-", 0, 0, 0, false},
    {"xoxp-", 0, 0, 0, false},
    {"xoxa-", 0, 0, 0, false},
    {"xoxr-", 0, 0, 0, false},
    {"xoxs-", 0, 0, 0, false},
    {"xoxe-", 0, 0, 0, false},
    {"xapp-", 0, 0, 0, false},
    /* Stripe */
    {"sk_live_", 0, 0, 0, false},
    {"rk_live_", 0, 0, 0, false},
    {"sk_test_", 0, 0, 0, false},
    {"rk_test_", 0, 0, 0, false},
    {"whsec_", 0, 0, 0, false},
    /* Vault */
    {"hvs.", 0, 0, 0, false},
    {"hvb.", 0, 0, 0, false},
    {"hvr.", 0, 0, 0, false},
    /* Google: API keys, OAuth access tokens */
    {"AIza", 39, 0, 0, false},
    {"ya29.", 0, 20, 0, false},
    /* Hugging Face, PyPI, npm */
    {"hf_", 37, 0, 0, false},
    {"pypi-AgE", 0, 0, 0, false},
    {"npm_", 40, 0, 0, true},
    /* AWS key ids */
    {"AKIA", 0, 0, 0, false},
    {"ASIA", 0, 0, 0, false},
    /* OpenAI (sk-..., sk-proj-...), Anthropic (sk-ant-...), SendGrid */
    {"sk-", 0, 24, 0, true},
    {"SG.", 0, 40, 2, false},
    /* DigitalOcean, Shopify, Databricks, Atlassian, Groq, Replicate */
    {"dop_v1_", 0, 0, 0, false},
    {"shpat_", 0, 0, 0, false},
    {"shpss_", 0, 0, 0, false},
    {"dapi", 36, 0, 0, true},
    {"ATATT", 0, 0, 0, false},
    {"gsk_", 0, 24, 0, true},
    {"r8_", 0, 24, 0, true},
    /* Tailscale, age, Docker Hub, Grafana, Doppler, Square, Mailgun, New Relic,
     * Figma, PlanetScale, RubyGems, Linear, NVIDIA, Perplexity, xAI, Google
     * refresh tokens, Facebook, Twilio */
    {"tskey-", 0, 0, 0, false},
    {"AGE-SECRET-KEY-1", 0, 0, 0, false},
    {"dckr_pat_", 0, 0, 0, false},
    {"glsa_", 0, 0, 0, false},
    {"glc_", 0, 24, 0, true},
    {"dp.st.", 0, 0, 0, false},
    {"dp.pt.", 0, 0, 0, false},
    {"sq0atp-", 0, 0, 0, false},
    {"sq0csp-", 0, 0, 0, false},
    {"key-", 36, 0, 0, true},
    {"NRAK-", 0, 0, 0, false},
    {"figd_", 0, 0, 0, false},
    {"pscale_tkn_", 0, 0, 0, false},
    {"pscale_pw_", 0, 0, 0, false},
    {"rubygems_", 0, 0, 0, false},
    {"lin_api_", 0, 0, 0, false},
    {"nvapi-", 0, 24, 0, true},
    {"pplx-", 0, 24, 0, true},
    {"xai-", 0, 24, 0, true},
    {"1//", 0, 40, 0, true},
    {"EAA", 0, 40, 0, true},
    {"SK", 34, 0, 0, true},
    {"xoxc-", 0, 0, 0, false},
    {"shppa_", 0, 0, 0, false},
    {"shpca_", 0, 0, 0, false},
    /* JWTs: header.payload.signature */
    {"eyJ", 0, 0, 2, false},
};
#define NSHAPES (sizeof(token_shapes) / sizeof(*token_shapes))

static bool mixed_after(const char *tok, size_t from, size_t n)
{
	bool letter = false, digit = false;

	for (size_t j = from; j < n; j++) {
		unsigned char c = (unsigned char)tok[j];
		letter |= isalpha(c) != 0;
		digit |= isdigit(c) != 0;
	}
	return letter && digit;
}

static bool shape_fits(const struct token_shape *t, const char *tok, size_t n)
{
	size_t plen = strlen(t->prefix);

	if (t->exact) {
		if (n != t->exact)
			return false;
		for (size_t j = plen; j < n; j++)
			if (!isalnum((unsigned char)tok[j]) && tok[j] != '_' && tok[j] != '-')
				return false; /* a file name such as hf_model.bin is no token */
		return !t->mixed || mixed_after(tok, plen, n);
	}
	size_t dots = 0;
	for (size_t j = 0; j < n; j++)
		dots += tok[j] == '.';
	/* Long enough to be a token, not a word that happens to start so. */
	if (n < (t->least ? t->least : 16) || dots < t->dots)
		return false;
	if (t->mixed && (memchr(tok, '.', n) || !mixed_after(tok, plen, n)))
		return false; /* sk-learn-notebook.ipynb is a file */
	return true;
}

/*
 * An AWS secret access key: exactly 40 characters of [A-Za-z0-9/+], standing
 * alone. Paths and words of that length have few case changes; a random key
 * many (about 20): 12 are wanted, or 8 with a '/' or '+' in it (AWS's own
 * example key has 10).
 */
static size_t aws_secret_at(const char *arg, size_t i, size_t len)
{
	size_t end = i, changes = 0, digits = 0;

	if (arg[i] == '/')
		return 0;
	while (end < len &&
	       (isalnum((unsigned char)arg[end]) || arg[end] == '/' || arg[end] == '+'))
		end++;
	if (end - i != 40 || (end < len && is_token_char(arg[end]) && arg[end] != '='))
		return 0;
	for (size_t j = i; j < end; j++) {
		unsigned char c = (unsigned char)arg[j];
		digits += isdigit(c) != 0;
		if (j > i && arg[j - 1] == '/' && c == '/')
			return 0;
		if (j > i && isalpha(c) && isalpha((unsigned char)arg[j - 1]) &&
		    !isupper(c) != !isupper((unsigned char)arg[j - 1]))
			changes++;
	}
	bool marks = memchr(arg + i, '/', 40) || memchr(arg + i, '+', 40);
	return digits && (changes >= 12 || (changes >= 8 && marks)) ? end : 0;
}

/* The shapes by their first byte: by_first[first[b] .. first[b + 1]) start with b. */
static unsigned char by_first[NSHAPES];
static unsigned short first[257];

static void index_shapes(void)
{
	static bool known;
	unsigned n = 0;

	if (known)
		return;
	for (unsigned b = 0; b < 256; b++) {
		first[b] = (unsigned short)n;
		for (size_t k = 0; k < NSHAPES; k++)
			if ((unsigned char)token_shapes[k].prefix[0] == b)
				by_first[n++] = (unsigned char)k;
	}
	first[256] = (unsigned short)n;
	known = true;
}

/* The end of a known shape starting at i, or 0. */
static size_t shape_at(const char *arg, size_t i, size_t len)
{
	unsigned b = (unsigned char)arg[i];

	for (unsigned k = first[b]; k < first[b + 1]; k++) {
		const struct token_shape *t = &token_shapes[by_first[k]];
		/* The second byte first: words start with these letters too. */
		if (i + 1 >= len || arg[i + 1] != t->prefix[1] ||
		    !starts_with(arg + i, len - i, t->prefix))
			continue;
		size_t end = i;
		while (end < len && is_token_char(arg[end]))
			end++;
		if (shape_fits(t, arg + i, end - i))
			return end;
	}
	return 0;
}

void find_token_shapes(const char *arg, size_t len, struct spans *sp)
{
	index_shapes();
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)arg[i];
		if (!isalnum(c))
			continue;
		if (i > 0 && is_token_char(arg[i - 1]) && arg[i - 1] != '=' && arg[i - 1] != '/')
			continue; /* only at the start of a token */
		size_t end = first[c] != first[c + 1] ? shape_at(arg, i, len) : 0;
		if (!end && len - i >= 40)
			end = aws_secret_at(arg, i, len);
		if (end) {
			add_span(sp, i, end);
			i = end;
		}
	}
	if (len >= 16 && memchr(arg, '-', len) && memmem(arg, len, "PRIVATE KEY-----", 16))
		add_span(sp, 0, len); /* the key itself, header and all */
}
