#include "common/cloudmeta.h"

#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

struct buffer {
	char data[512];
	size_t len;
	bool overflow;
};

static size_t collect(char *ptr, size_t size, size_t n, void *user)
{
	struct buffer *b = user;
	size_t bytes = size * n;

	if (b->len + bytes >= sizeof(b->data)) {
		b->overflow = true; /* metadata values are short; anything else is not ours */
		return 0;
	}
	memcpy(b->data + b->len, ptr, bytes);
	b->len += bytes;
	b->data[b->len] = '\0';
	return bytes;
}

/* Copies a metadata value; false if it does not fit (then it is not what we asked for). */
static bool copy_value(char *dst, size_t size, const char *src)
{
	size_t n = strcspn(src, "\r\n");

	if (n == 0 || n >= size)
		return false;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return true;
}

/* One request; returns the HTTP status (0 on a transport error, reason in err). */
static long request(const char *url, const char *method, struct curl_slist *headers,
		    long timeout_ms, struct buffer *out, char *err, size_t err_size)
{
	CURL *c = curl_easy_init();
	long status = 0;

	memset(out, 0, sizeof(*out));
	if (!c) {
		snprintf(err, err_size, "curl_easy_init failed");
		return 0;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*"); /* metadata is link-local: never via a proxy */
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	if (!strcmp(method, "PUT"))
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
	CURLcode rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	else
		snprintf(err, err_size, "%s: %s", url, curl_easy_strerror(rc));
	curl_easy_cleanup(c);
	return status;
}

static bool aws_token(const char *endpoint, long timeout_ms, char *token, size_t size, char *err,
		      size_t err_size)
{
	char url[512];
	struct buffer b;
	struct curl_slist *h = curl_slist_append(NULL, "X-aws-ec2-metadata-token-ttl-seconds: 300");

	snprintf(url, sizeof(url), "%s/latest/api/token", endpoint);
	long status = request(url, "PUT", h, timeout_ms, &b, err, err_size);
	curl_slist_free_all(h);
	if (status != 200 || !copy_value(token, size, b.data)) {
		if (status)
			snprintf(err, err_size, "IMDSv2 token: HTTP %ld", status);
		return false;
	}
	return true;
}

static bool aws_get(const char *endpoint, const char *path, char *token, size_t token_size,
		    long timeout_ms, char *out, size_t size, char *err, size_t err_size)
{
	char url[512], header[600];
	struct buffer b;

	snprintf(url, sizeof(url), "%s/latest/%s", endpoint, path);
	for (int attempt = 0; attempt < 2; attempt++) {
		snprintf(header, sizeof(header), "X-aws-ec2-metadata-token: %s", token);
		struct curl_slist *h = curl_slist_append(NULL, header);
		long status = request(url, "GET", h, timeout_ms, &b, err, err_size);
		curl_slist_free_all(h);
		if (status == 200)
			return copy_value(out, size, b.data);
		/* 401: the token expired; fetch a new one, once. */
		if (status != 401 || attempt == 1 ||
		    !aws_token(endpoint, timeout_ms, token, token_size, err, err_size)) {
			if (status)
				snprintf(err, err_size, "IMDSv2 %s: HTTP %ld", path, status);
			return false;
		}
	}
	return false;
}

static int detect_aws(const char *endpoint, long timeout_ms, struct instance_facts *f, char *err,
		      size_t err_size)
{
	char token[256], life[32] = "";

	if (!aws_token(endpoint, timeout_ms, token, sizeof(token), err, err_size))
		return -1;
	if (!aws_get(endpoint, "meta-data/instance-type", token, sizeof(token), timeout_ms,
		     f->instance_type, sizeof(f->instance_type), err, err_size) ||
	    !aws_get(endpoint, "meta-data/placement/availability-zone", token, sizeof(token),
		     timeout_ms, f->zone, sizeof(f->zone), err, err_size))
		return -1;
	/* Older instances lack placement/region: the zone minus its letter. */
	if (!aws_get(endpoint, "meta-data/placement/region", token, sizeof(token), timeout_ms,
		     f->region, sizeof(f->region), err, err_size)) {
		if (!copy_value(f->region, sizeof(f->region), f->zone))
			return -1;
		size_t n = strlen(f->region);
		if (n > 1)
			f->region[n - 1] = '\0';
	}
	if (aws_get(endpoint, "meta-data/instance-life-cycle", token, sizeof(token), timeout_ms,
		    life, sizeof(life), err, err_size) &&
	    !strcmp(life, "spot"))
		snprintf(f->lifecycle, sizeof(f->lifecycle), "spot");
	else
		snprintf(f->lifecycle, sizeof(f->lifecycle), "on-demand");
	snprintf(f->provider, sizeof(f->provider), "aws");
	f->known = true;
	return 0;
}

static bool gcp_get(const char *endpoint, const char *path, long timeout_ms, char *out, size_t size,
		    char *err, size_t err_size)
{
	char url[512];
	struct buffer b;
	struct curl_slist *h = curl_slist_append(NULL, "Metadata-Flavor: Google");

	snprintf(url, sizeof(url), "%s/computeMetadata/v1/%s", endpoint, path);
	long status = request(url, "GET", h, timeout_ms, &b, err, err_size);
	curl_slist_free_all(h);
	if (status != 200)
		return false;
	const char *last = strrchr(b.data, '/'); /* projects/N/machineTypes/X -> X */
	return copy_value(out, size, last ? last + 1 : b.data);
}

static int detect_gcp(const char *endpoint, long timeout_ms, struct instance_facts *f, char *err,
		      size_t err_size)
{
	char model[32] = "";

	if (!gcp_get(endpoint, "instance/machine-type", timeout_ms, f->instance_type,
		     sizeof(f->instance_type), err, err_size) ||
	    !gcp_get(endpoint, "instance/zone", timeout_ms, f->zone, sizeof(f->zone), err,
		     err_size))
		return -1;
	if (!copy_value(f->region, sizeof(f->region), f->zone))
		return -1;
	char *dash = strrchr(f->region, '-'); /* us-central1-a -> us-central1 */
	if (dash)
		*dash = '\0';
	gcp_get(endpoint, "instance/scheduling/provisioning-model", timeout_ms, model,
		sizeof(model), err, err_size);
	snprintf(f->lifecycle, sizeof(f->lifecycle), "%s",
		 !strcmp(model, "SPOT") ? "spot" : "on-demand");
	snprintf(f->provider, sizeof(f->provider), "gcp");
	f->known = true;
	return 0;
}

int cloud_detect(const char *aws_endpoint, const char *gcp_endpoint, long timeout_ms,
		 struct instance_facts *out, char *err, size_t err_size)
{
	memset(out, 0, sizeof(*out));
	snprintf(err, err_size, "no metadata service answered");
	if (aws_endpoint && detect_aws(aws_endpoint, timeout_ms, out, err, err_size) == 0)
		return 0;
	memset(out, 0, sizeof(*out));
	if (gcp_endpoint && detect_gcp(gcp_endpoint, timeout_ms, out, err, err_size) == 0)
		return 0;
	memset(out, 0, sizeof(*out));
	return -1;
}
