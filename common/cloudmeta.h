/*
 * Which cloud instance this is, from the metadata service: AWS IMDSv2 (a
 * session token from PUT /latest/api/token, then GETs carrying it) or the GCP
 * metadata server. Short timeouts, no retries (one token refresh on 401):
 * off a cloud it answers "unknown" within the timeout.
 */
#ifndef TRACER_CLOUDMETA_H
#define TRACER_CLOUDMETA_H

#include <stdbool.h>
#include <stddef.h>

struct instance_facts {
	bool known;
	char provider[8];	/* aws, gcp */
	char instance_type[64]; /* m5.large, n2-standard-4 */
	char region[32];
	char zone[48];
	char lifecycle[16]; /* on-demand, spot */
};

#define AWS_METADATA_ENDPOINT "http://169.254.169.254"
#define GCP_METADATA_ENDPOINT "http://metadata.google.internal"

/* Endpoints may be NULL to skip a provider. 0 if known, -1 with the reason in err. */
int cloud_detect(const char *aws_endpoint, const char *gcp_endpoint, long timeout_ms,
		 struct instance_facts *out, char *err, size_t err_size);

#endif
