#!/bin/bash
# Installs the Debian packages tracer needs to build, test and run its demo,
# skipping what is already there. Used by `make deps`, `make demo`, `make
# check` and CI. Without root it only lists what is missing.
set -euo pipefail

build=(make gcc clang llvm bpftool pkg-config libbpf-dev libelf-dev zlib1g-dev
	libprotobuf-c-dev protobuf-c-compiler libnng-dev libsqlite3-dev libjansson-dev
	libcurl4-openssl-dev libcmocka-dev libinih-dev libseccomp-dev)
run=(sqlite3 python3 util-linux procps)
demo=(bwa samtools bcftools gzip gawk)
tests=(debhelper lintian stress-ng strace linux-perf snakemake cwltool slurm-wlm slurmdbd mariadb-server munge chromium
	clickhouse-server debootstrap systemd-container cppcheck clang-tidy clang-format gdb
	docker.io podman runc toil prometheus-node-exporter prometheus python3-pandas r-base-core
	python3-rdflib
	groff-base man-db
	# make package-test rebuilds the previous release, whose debian/control asks for it
	help2man)
# The peers `make bench` compares against, and valgrind for its instruction count.
bench=(libbpf-tools bpftrace fio valgrind)

wanted=("${build[@]}" "${run[@]}")
case "${1:-all}" in
	build) wanted=("${build[@]}") ;;
	all) wanted+=("${demo[@]}" "${tests[@]}") ;;
	demo) wanted+=("${demo[@]}") ;; # make demo: the pipeline's tools, no test servers
	bench) wanted+=("${demo[@]}" "${bench[@]}") ;;
esac

missing=()
for p in "${wanted[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "missing Debian packages: ${missing[*]}" >&2
	echo "install them with: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Servers among them (MariaDB, ClickHouse, slurmdbd) are started by the tests that need
# them, in their own directories: not as services at install time.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' > "$policy"
	chmod 755 "$policy"
	trap 'rm -f "$policy"' EXIT
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
