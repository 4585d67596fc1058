#!/bin/bash
# `sudo make demo`: trace the demo pipeline with tracer run and show the report.
# The pipeline runs as the user who typed sudo; the database and work files
# land in build/demo/, owned by that user, so `build/tracer show --db
# build/demo/demo.db` works without sudo afterwards.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "$(id -u)" -ne 0 ]; then
	echo "make demo loads BPF programs: run it with sudo" >&2
	exit 1
fi
demo=build/demo
rm -rf "$demo"
mkdir -p "$demo"
# The files are the user's who typed sudo, or root's. The aggregator (never root,
# never nobody) writes the database: as the sudo user in their directory, else
# as tracer-aggregator in a directory tracer run makes for it.
owner=${SUDO_USER:-root}
db="$demo/demo.db"
if [ "$owner" = root ]; then
	db="$demo/db/demo.db"
else
	chown "$owner": "$demo"
fi

build/tracer run --db "$db" --pipeline demo-variant-calling \
	-- examples/demo/pipeline.sh "$demo/work"
echo
echo "== tracer explain: where the time went, and what went wrong"
build/tracer explain --db "$db"
echo
echo "== tracer timeline"
build/tracer timeline --db "$db"
build/tracer report --db "$db" --html "$demo/report.html"
chown "$owner": "$demo/report.html"
echo
echo "Recorded in $db; HTML report in $demo/report.html."
echo "Try: build/tracer signals, recommend --rate 0.10, cost --rate 0.10 (all with --db $db)"
