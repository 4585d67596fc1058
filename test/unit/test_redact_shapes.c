/*
 * Secret shapes met in real command lines, one row each: the secret must not
 * survive anywhere in the redacted argv, and what makes the command readable
 * (the tool, the flag, a user name, the host) must. Shell strings (`sh -c`,
 * `bash -c`, ProxyCommand=) get the same rules word by word.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "collector/redact/redact.h"

struct shape {
	const char *argv[10];
	const char *secret; /* must appear nowhere after redaction */
	const char *keep;   /* must survive (NULL: nothing to check) */
};

static const struct shape shapes[] = {
    /* flag=value and flag value */
    {{"mysqld", "--password=Hunter2xx"}, "Hunter2xx", "--password="},
    {{"tool", "--token", "Tk9x8y7z"}, "Tk9x8y7z", "--token"},
    {{"tool", "--api-key", "AK77zz"}, "AK77zz", "--api-key"},
    {{"tool", "--apikey=AK78zz"}, "AK78zz", "--apikey="},
    {{"tool", "--secret", "Sx91"}, "Sx91", "--secret"},
    {{"tool", "--client-secret=CS44q"}, "CS44q", "--client-secret="},
    {{"tool", "--access-key", "AcK31"}, "AcK31", NULL},
    {{"tool", "--private-key=PK8822"}, "PK8822", NULL},
    {{"tool", "--passphrase", "pp-long-1"}, "pp-long-1", "--passphrase"},
    {{"tool", "--auth-token=AT5501"}, "AT5501", NULL},
    {{"tool", "--db-password", "Dbp0001"}, "Dbp0001", "--db-password"},
    {{"tool", "-password", "Pw9902"}, "Pw9902", NULL},
    {{"tool", "--credentials=cred-Z9"}, "cred-Z9", NULL},
    {{"tool", "--session-token", "Sess77"}, "Sess77", NULL},
    /* environment-style assignments */
    {{"env", "MYSQL_PWD=My5ql"}, "My5ql", "MYSQL_PWD="},
    {{"env", "PGPASSWORD=Pg5ql"}, "Pg5ql", "PGPASSWORD="},
    {{"env", "GITHUB_TOKEN=Gh7kk"}, "Gh7kk", "GITHUB_TOKEN="},
    {{"env", "AWS_SECRET_ACCESS_KEY=AwsS3cr"}, "AwsS3cr", NULL},
    {{"env", "AWS_SESSION_TOKEN=AwsSess"}, "AwsSess", NULL},
    {{"env", "STRIPE_KEY=sk_live_9"}, "sk_live_9", "STRIPE_KEY="},
    {{"env", "DB_PASS=DbPass8"}, "DbPass8", NULL},
    {{"env", "SLACK_SECRET=Sl4ck"}, "Sl4ck", NULL},
    {{"env", "API_KEY=Api12"}, "Api12", NULL},
    /* glued and detached short flags of known tools */
    {{"mysql", "-uroot", "-pMyPw1"}, "MyPw1", "-uroot"},
    {{"mysqldump", "-pDumpPw"}, "DumpPw", NULL},
    {{"mariadb", "-pMaria1"}, "Maria1", NULL},
    {{"sshpass", "-p", "SshP1"}, "SshP1", "sshpass"},
    {{"sshpass", "-pSshP2", "ssh", "host"}, "SshP2", "host"},
    {{"curl", "-u", "alice:CurlP1", "https://h"}, "CurlP1", "alice:"},
    {{"curl", "-ualice:CurlP2", "https://h"}, "CurlP2", "-ualice:"},
    {{"curl", "--user=alice:CurlP3", "https://h"}, "CurlP3", NULL},
    {{"curl", "--user", "alice:CurlP4", "https://h"}, "CurlP4", "alice:"},
    {{"curl", "--proxy-user", "bob:CurlP5"}, "CurlP5", "bob:"},
    /* A "user" part that itself holds a secret (found by make fuzz): all of it goes. */
    {{"curl", "-ux--password=CurlP6:pw"}, "CurlP6", "-u"},
    {{"curl", "-u", "x--token=CurlP7:pw"}, "CurlP7", NULL},
    {{"curl", "--user=x--password=CurlP8:pw"}, "CurlP8", NULL},
    {{"docker", "login", "-u", "me", "-p", "DockP1", "reg.io"}, "DockP1", "reg.io"},
    {{"docker", "login", "--password", "DockP2"}, "DockP2", NULL},
    {{"podman", "login", "-p", "PodP1"}, "PodP1", NULL},
    {{"redis-cli", "-a", "RedisP1", "ping"}, "RedisP1", "ping"},
    {{"redis-cli", "-aRedisP2"}, "RedisP2", NULL},
    {{"keytool", "-list", "-storepass", "KeyS1"}, "KeyS1", "-storepass"},
    {{"keytool", "-keypass", "KeyP1"}, "KeyP1", NULL},
    {{"wget", "--password", "WgetP1", "http://h"}, "WgetP1", NULL},
    {{"wget", "--password=WgetP2"}, "WgetP2", NULL},
    {{"smbclient", "-U", "alice%SmbP1"}, "SmbP1", NULL},
    {{"htpasswd", "-b", "/etc/htp", "alice", "HtP1"}, "HtP1", "/etc/htp"},
    {{"htpasswd", "-bc", "/etc/htp", "bob", "HtP2"}, "HtP2", "bob"},
    {{"aws", "configure", "set", "aws_secret_access_key", "AwsCfg1"}, "AwsCfg1", NULL},
    {{"aws", "configure", "set", "aws_session_token", "AwsCfg2"}, "AwsCfg2", NULL},
    {{"git", "config", "--global", "user.password", "GitCfg1"}, "GitCfg1", NULL},
    {{"openssl", "rsa", "-passin", "pass:OsslP1"}, "OsslP1", "pass:"},
    /* headers */
    {{"curl", "-H", "Authorization: Bearer HdrB1"}, "HdrB1", "Authorization:"},
    {{"curl", "-H", "Cookie: session=HdrC1"}, "HdrC1", "Cookie:"},
    {{"curl", "-H", "X-Api-Key: HdrK1"}, "HdrK1", NULL},
    {{"curl", "--header", "Proxy-Authorization: Basic HdrP1"}, "HdrP1", NULL},
    {{"wget", "--header=Authorization: Bearer WgHdr1"}, "WgHdr1", "--header="},
    {{"git", "-c", "http.extraheader=AUTHORIZATION: basic GitHdr1", "clone", "x"},
     "GitHdr1",
     "clone"},
    /* URLs */
    {{"git", "clone", "https://user:UrlP1@github.com/o/r"}, "UrlP1", "github.com"},
    {{"git", "clone", "https://UrlT1tok@github.com/o/r"}, "UrlT1tok", "github.com"},
    {{"psql", "postgresql://app:UrlPg1@db:5432/x"}, "UrlPg1", "db:5432"},
    {{"mongo", "mongodb://u:UrlMg1@h/db"}, "UrlMg1", NULL},
    {{"redis-cli", "-u", "redis://:UrlRd1@h:6379"}, "UrlRd1", NULL},
    {{"curl", "https://h/f?token=QsT1&x=1"}, "QsT1", "x=1"},
    {{"curl", "https://b.s3.amazonaws.com/k?X-Amz-Signature=QsS1&X-Amz-Date=2"}, "QsS1", NULL},
    {{"curl", "https://h/f?sig=QsS2"}, "QsS2", NULL},
    {{"curl", "https://h/f?access_token=QsA1"}, "QsA1", NULL},
    /* known token shapes, wherever they stand */
    {{"tool", "ghp_0123456789abcdefABCDEF0123456789ab"}, "ghp_0123456789abcdef", NULL},
    {{"tool", "github_pat_11ABCDEFG0123456789_abcdefghij"}, "11ABCDEFG0123456789", NULL},
    {{"tool", "xoxb-123456789012-abcdefghijkl"}, "123456789012-abcdefghijkl", NULL},
    {{"tool", "glpat-abcdefghij0123456789"}, "abcdefghij0123456789", NULL},
    {{"tool", "AKIAIOSFODNN7EXAMPLE"}, "AKIAIOSFODNN7EXAMPLE", NULL},
    {{"tool", "--key-id=ASIAIOSFODNN7EXAMPL2"}, "ASIAIOSFODNN7EXAMPL2", NULL},
    {{"tool", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sIgNaTuRe0001"}, "sIgNaTuRe0001", NULL},
    {{"tool", "-----BEGIN RSA PRIVATE KEY-----MIIEpAIBAAKC-----END RSA PRIVATE KEY-----"},
     "MIIEpAIBAAKC",
     NULL},
    /* inside shell strings */
    {{"bash", "-c", "mysql -pShP1 db < x.sql"}, "ShP1", "mysql"},
    {{"sh", "-c", "curl --token ShT1 https://h"}, "ShT1", "https://h"},
    {{"bash", "-c", "set -e; tool --api-key=ShK1 run"}, "ShK1", "run"},
    {{"bash", "-c", "MYSQL_PWD=ShE1 mysql db"}, "ShE1", "mysql db"},
    {{"bash", "-c", "sshpass -p 'ShQ1' ssh h"}, "ShQ1", "ssh h"},
    {{"bash", "-c", "redis-cli -a ShR1 ping && echo ok"}, "ShR1", "echo ok"},
    {{"bash", "-c", "docker login -u me -p ShD1 reg.io | tee log"}, "ShD1", "tee log"},
    {{"bash", "-c", "curl -H 'Authorization: Bearer ShH1' https://h"}, "ShH1", "https://h"},
    {{"bash", "-c", "git clone https://me:ShU1@h/r.git"}, "ShU1", "h/r.git"},
    {{"bash", "-c", "aws configure set aws_secret_access_key ShA1"}, "ShA1", NULL},
    {{"bash", "-c", "echo start\nexport GH_TOKEN=ShN1\nrun"}, "ShN1", "echo start"},
    {{"bash", "-c", "set -e\ncd /data\nmysql -pShNL1 db\n"}, "ShNL1", "cd /data"},
    {{"sh", "-c", "keytool -list -storepass ShK2 -keystore k.jks"}, "ShK2", "k.jks"},
    {{"ssh", "-o", "ProxyCommand=sshpass -p PxP1 ssh -W %h:%p jump", "h"}, "PxP1", "jump"},
    {{"bash", "-c", "cmd --password=\"ShDQ1\" next"}, "ShDQ1", "next"},
    {{"bash", "-c", "x=$(curl -u u:ShSub1 https://h)"}, "ShSub1", NULL},
    {{"bash", "-c", "tool ghp_0123456789abcdefABCDEF0123456789xy"}, "0123456789abcdefABCDEF", NULL},
    /* shell strings inside shell strings: the inner command's own rules */
    {{"bash", "-c", "sh -c \"mysql -pNsP1 -u root\""}, "NsP1", "-u root"},
    {{"bash", "-c", "docker exec c sh -c 'sshpass -p NsP2 ssh h'"}, "NsP2", "ssh h"},
    {{"bash", "-c", "sh -c \"sh -c \\\"mysql -pNsP3 db\\\"\""}, "NsP3", "db"},
    {{"bash", "-c", "su -c 'redis-cli -a NsP4 ping' app"}, "NsP4", "ping"},
    {{"bash", "-c", "bash -c 'x=1; mysql -pNsP5 db' && echo done"}, "NsP5", "echo done"},
    {{"ssh", "host", "sh -c 'mysql -pNsP6 db'"}, "NsP6", "host"},
    {{"bash", "-c", "sh -c $'cd /x\\nmysql -pNsP7 db\\n'"}, "NsP7", "db"},
    {{"bash", "-c", "sh -c 'echo \"a  b\" | wc -l'"}, "", "sh -c 'echo \"a  b\" | wc -l'"},
    /* a tool behind a wrapper or a shell keyword: its own rules still */
    {{"sudo", "-u", "app", "mysql", "-pWrP1", "db"}, "WrP1", "db"},
    {{"env", "A=1", "/usr/bin/mysql", "-pWrP2"}, "WrP2", "A=1"},
    {{"timeout", "10", "sshpass", "-p", "WrP3", "ssh", "h"}, "WrP3", "ssh"},
    {{"sudo", "htpasswd", "-b", "/etc/pw", "bob", "WrP4"}, "WrP4", "bob"},
    {{"sudo", "git", "config", "user.password", "WrP5"}, "WrP5", "user.password"},
    {{"bash", "-c", "if true; then mysql -pWrP6 db; fi"}, "WrP6", "fi"},
    {{"bash", "-c", "for i in 1; do redis-cli -a WrP7 ping; done"}, "WrP7", "ping"},
    {{"bash", "-c", "{ time mysql -pWrP8; } 2>t"}, "WrP8", "2>t"},
    {{"bash", "-c", "exec nohup sshpass -p WrP9 ssh h &"}, "WrP9", "ssh h"},
    {{"srun", "-n1", "bash", "-c", "sudo -u db mysql -pWrP10 x"}, "WrP10", "-u db"},
    /* JSON and Python literals, quoted values */
    {{"curl", "-d", "{\"user\":\"bob\",\"password\":\"Js1x\"}", "https://h"},
     "Js1x",
     "\"user\":\"bob\""},
    {{"curl", "--data-raw", "{\"api_token\": \"Js2\\\"x\", \"n\": 1}"}, "Js2", "\"n\": 1"},
    {{"python3", "-c", "login({'secret': 'Js3y', 'user': 'u'})"}, "Js3y", "'user': 'u'"},
    {{"tool", "{\"pin\": 1, \"passphrase\": 42917}"}, "42917", "\"pin\": 1"},
    {{"bash", "-c", "export DB_PASSWORD=\"Qv1 Qv2\"; run"}, "Qv2", "run"},
    /* more tools and settings */
    {{"curl", "--oauth2-bearer", "Ob1x"}, "Ob1x", NULL},
    {{"vault", "login", "token=VtT1"}, "VtT1", "vault"},
    {{"ldapsearch", "-x", "-D", "cn=admin", "-w", "LdP1"}, "LdP1", "cn=admin"},
    {{"java", "-Djavax.net.ssl.keyStorePassword=JvP1", "-jar", "a.jar"}, "JvP1", "a.jar"},
    {{"spark-submit", "--conf", "spark.hadoop.fs.s3a.secret.key=SpK1"}, "SpK1", NULL},
    {{"az", "login", "-u", "me", "-p", "AzP1"}, "AzP1", "me"},
    {{"kubectl", "--token=KubeT1", "get", "pods"}, "KubeT1", "pods"},
    {{"helm", "repo", "add", "x", "https://h", "--password", "HelmP1"}, "HelmP1", "https://h"},
    {{"zip", "-P", "ZipP1", "a.zip", "f"}, "ZipP1", "a.zip"},
    {{"7z", "a", "-pSevenP1", "a.7z"}, "SevenP1", "a.7z"},
    {{"openssl", "enc", "-aes256", "-k", "OsslK1"}, "OsslK1", "-aes256"},
    {{"rsync", "--password-file=/etc/rs.pw", "src", "dst"}, "", "/etc/rs.pw"},
    {{"smbclient", "//h/s", "-U", "bob%SmbP1"}, "SmbP1", "bob%"},
    {{"sqlcmd", "-S", "h", "-U", "sa", "-P", "SqlP1"}, "SqlP1", "sa"},
    {{"unzip", "-P", "UnzP1", "a.zip"}, "UnzP1", "a.zip"},
    {{"lftp", "-u", "bob,LftP1", "ftp.h"}, "LftP1", "bob,"},
    {{"rar", "x", "-pRarP1", "a.rar"}, "RarP1", "a.rar"},
    {{"ncftp", "-u", "bob", "-p", "NcfP1", "h"}, "NcfP1", "bob"},
    {{"sqlplus", "-s", "scott/OraP1@orcl", "@q.sql"}, "OraP1", "@orcl"},
    {{"expdp", "userid=scott/OraP2", "dumpfile=d.dmp"}, "OraP2", "userid=scott/"},
    {{"bash", "-c", "echo exit | sqlplus scott/OraP3@db"}, "OraP3", "scott/"},
    {{"mc", "alias", "set", "m", "http://h:9000", "AKEY1", "McS3cr1"}, "McS3cr1", "AKEY1"},
    {{"sqlplus", "/nolog", "@setup.sql"}, "", "/nolog"},
    /* keys of many kinds: the option names a key, its value is the key */
    {{"aws", "s3", "cp", "a", "s3://b/k", "--sse-c-key", "SseK1"}, "SseK1", "s3://b/k"},
    {{"az", "storage", "blob", "list", "--account-key", "AzK1=="}, "AzK1", "list"},
    {{"az", "storage", "container", "list", "--connection-string",
      "DefaultEndpointsProtocol=https;AccountName=acc1;AccountKey=AzK2==;EndpointSuffix=x"},
     "AzK2",
     "AccountName=acc1"},
    {{"bash", "-c", "az storage blob upload --connection-string 'AccountName=a;AccountKey=AzK3'"},
     "AzK3",
     "AccountName=a"},
    {{"rclone", "copy", "a", "remote:b", "--azureblob-key", "RcK1"}, "RcK1", "remote:b"},
    {{"duplicity", "--encryption-key", "DupK1", "src"}, "DupK1", "src"},
    {{"meilisearch", "--master-key=MeiK1"}, "MeiK1", "--master-key="},
    {{"tool", "--license-key", "LicK1"}, "LicK1", "--license-key"},
    {{"kubectl", "config", "set-credentials", "u", "--client-key-data", "KubK1"}, "KubK1", "u"},
    {{"tool", "--accountKey", "CamK1"}, "CamK1", "--accountKey"},
    {{"tool", "--psk", "PskK1"}, "PskK1", "--psk"},
    {{"ssh-keygen", "-t", "ed25519", "-N", "SshN1", "-f", "k"}, "SshN1", "ed25519"},
    {{"ssh-keygen", "-p", "-P", "SshP1", "-N", "SshP2", "-f", "k"}, "SshP1", "-f"},
    {{"bash", "-c", "ssh-keygen -p -P SshP3 -N '' -f k"}, "SshP3", "-f k"},
    /* secrets set by name: the value is the secret, whatever its name */
    {{"nextflow", "secrets", "set", "DB_URL", "NfS1"}, "NfS1", "DB_URL"},
    {{"java", "-cp", "nf.jar", "nextflow.cli.Launcher", "secrets", "set", "DB_URL", "NfS2"},
     "NfS2",
     "DB_URL"},
    {{"bash", "-c", "nextflow secrets set HOST_URL NfS3 && nextflow run main.nf"},
     "NfS3",
     "main.nf"},
    /* values given to a command that stores secrets, whatever their names */
    {{"kubectl", "create", "secret", "generic", "db", "--from-literal=api_url=KubL1"},
     "KubL1",
     "api_url="},
    {{"kubectl", "create", "secret", "generic", "db", "--from-literal", "host=KubL2"},
     "KubL2",
     "host="},
    {{"gh", "secret", "set", "DEPLOY_HOST", "--body", "GhB1"}, "GhB1", "DEPLOY_HOST"},
    {{"gh", "secret", "set", "DEPLOY_HOST", "--body=GhB2"}, "GhB2", "--body="},
    {{"gh", "secret", "set", "DEPLOY_HOST", "-bGhB3"}, "GhB3", "DEPLOY_HOST"},
    {{"fly", "secrets", "set", "API_HOST=FlyS1", "REGION=FlyS2"}, "FlyS1", "API_HOST="},
    {{"fly", "secrets", "set", "API_HOST=FlyS1", "REGION=FlyS2"}, "FlyS2", "REGION="},
    {{"az", "keyvault", "secret", "set", "--name", "n", "--value", "AzV1"}, "AzV1", "--name"},
    {{"vault", "kv", "put", "secret/app", "db_url=VaultV1"}, "VaultV1", "secret/app"},
    {{"bash", "-c",
      "gh secret set X --body ShB1 && kubectl create secret generic y "
      "--from-literal=url=ShK1"},
     "ShB1",
     "--from-literal=url="},
    {{"bash", "-c", "kubectl create secret generic y --from-literal=url=ShK2; echo a=b"},
     "ShK2",
     "a=b"},
    /* a command given as an option's value */
    {{"sbatch", "--wrap=mysql -pWrapP1 db"}, "WrapP1", "--wrap=mysql"},
    {{"sbatch", "--wrap", "sshpass -p WrapP2 ssh h"}, "WrapP2", "ssh h"},
    /* more token shapes and webhook addresses */
    {{"tool", "sk_live_51HxStripeK1abcdef"}, "StripeK1", NULL},
    {{"vault", "login", "hvs.CAESIVaultT1abcdefgh"}, "VaultT1", "login"},
    {{"curl", "https://h/v1?key=AIzaSyGoogleK1abcdefghijklmnopqrstuvwxy"}, "GoogleK1", "https://h"},
    {{"huggingface-cli", "download", "hf_HuggingT1abcdefghijklmnopqrstuvwxy"}, "HuggingT1", NULL},
    {{"curl", "-d", "{}", "https://hooks.slack.com/services/T0/B0/HookS1x"}, "HookS1x", "slack"},
    {{"curl", "https://discord.com/api/webhooks/42/HookD1x"}, "HookD1x", "discord.com"},
    /* a token set from R or Python code */
    {{"R", "-e", "Sys.setenv(GITHUB_PAT='RPat1abcdefghij'); remotes::install_github('x/y')"},
     "RPat1",
     "install_github"},
    {{"python3", "-c", "import os; os.environ['HF_TOKEN'] = 'PyTok1'; run()"}, "PyTok1", "run()"},
    {{"julia", "-e", "ENV[\"API_KEY\"]=\"JlK1\"; main()"}, "JlK1", "main()"},
    {{"python3", "-c", "assert cfg['token'] == expected"}, "", "== expected"},
    /* secrets that must not be confused with ordinary words */
    {{"tool", "--token-file", "/run/tok", "--password-stdin"}, "", "/run/tok"},
    {{"tool", "--max-tokens=200", "--tokenizer", "bpe"}, "", "--max-tokens=200"},
    {{"sort", "-k", "2", "file"}, "", "file"},
    {{"bash", "-c", "grep -q password notes.txt"}, "", "notes.txt"},
    {{"sort", "--key=1,1", "f"}, "", "--key=1,1"},
    {{"tool", "--sort-key", "sample_name"}, "", "sample_name"},
    {{"aws", "s3api", "get-object", "--key", "runs/a.bam"}, "", "runs/a.bam"},
    {{"aws", "s3", "cp", "a", "s3://b", "--sse-kms-key-id", "alias/mine"}, "", "alias/mine"},
    {{"aws", "ec2", "run-instances", "--key-name", "lab-keypair"}, "", "lab-keypair"},
    {{"tool", "--primary-key", "sample_id", "--public-key", "id.pub"}, "", "sample_id"},
    {{"tool", "--public-key", "id.pub"}, "", "id.pub"},
    {{"tool", "--ssh-key", "/home/u/.ssh/id_ed25519"}, "", "/home/u/.ssh/id_ed25519"},
    {{"tool", "--keyFile", "/etc/k.pem"}, "", "/etc/k.pem"},
    {{"python3", "train.py", "--model", "hf_model_weights_final_v2.bin"}, "", "hf_model_weights"},
    {{"bcftools", "query", "-f", "%CHROM\\t%POS\\n", "in.vcf.gz"}, "", "in.vcf.gz"},
    {{"kubectl", "get", "secret", "x", "-o", "jsonpath={.data.host}"}, "", "jsonpath={.data.host}"},
    {{"kubectl", "create", "configmap", "c", "--from-literal=region=eu-1"}, "", "region=eu-1"},
    {{"aws", "secretsmanager", "get-secret-value", "--secret-id", "prod/db"}, "", "prod/db"},
    {{"gh", "pr", "create", "-b", "fixes the index"}, "", "fixes the index"},
    {{"make", "CFLAGS=-O2", "install"}, "", "CFLAGS=-O2"},
};

static void test_every_shape(void **state)
{
	char buf[16384], *out[16];
	size_t failures = 0;

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		const struct shape *s = &shapes[i];
		unsigned argc = 0;
		while (argc < 10 && s->argv[argc])
			argc++;
		redact_argv(NULL, (char *const *)s->argv, argc, buf, sizeof(buf), out);
		bool leaked = false, lost = s->keep != NULL;
		for (unsigned a = 0; a < argc; a++) {
			if (s->secret[0] && strstr(out[a], s->secret))
				leaked = true;
			if (s->keep && strstr(out[a], s->keep))
				lost = false;
		}
		if (leaked || lost) {
			failures++;
			fprintf(stderr, "shape %zu (%s %s): %s\n", i, s->argv[0], s->argv[1],
				leaked ? "the secret survived" : "lost what it must keep");
			for (unsigned a = 0; a < argc; a++)
				fprintf(stderr, "    [%u] %s\n", a, out[a]);
		}
	}
	fprintf(stderr, "%zu shapes, %zu failed\n", sizeof(shapes) / sizeof(shapes[0]), failures);
	assert_int_equal(failures, 0);
	assert_true(sizeof(shapes) / sizeof(shapes[0]) >= 90);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_shape)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
