#!/bin/bash
# Instructions the aggregator executes per process it ingests, counted by
# callgrind: a measure of its own work that the shared machine's noise does
# not move (CPU time in `make bench` and daemon_cpu_ab.sh varies ±5% between
# runs of the same build; this varies well under 1%).
#
#   sudo test/bench/aggregator_instructions.sh BUILD [BUILD...]
#
# For each build, the aggregator runs under callgrind twice, fed SMALL and then
# LARGE synthetic process lives (fork, exec with a 4-argument argv, exit with
# counters) by ingestbench; the difference over LARGE - SMALL processes is the
# cost per process, without start-up and shutdown. Every build is fed by the
# last build's ingestbench, so all see the same frames. Kernel time (page
# faults, I/O) is not counted: CPU time is the bench's business, this is what
# the code asks of the CPU.
set -euo pipefail
small=${SMALL:-1000} large=${LARGE:-5000}
[ $# -ge 1 ] || { echo "usage: $0 BUILD [BUILD...]" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "needs root (the aggregator drops to nobody)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "needs valgrind (deploy/install-deps.sh bench)" >&2; exit 2; }
feeder=$(realpath "${!#}/helpers/ingestbench")

instructions() { # BUILD N: the aggregator's instructions over its life, N processes fed
	local b=$1 n=$2 w agg
	w=$(mktemp -d)
	chmod 777 "$w"
	# The aggregator writes its profile after dropping to nobody.
	install -m 666 -o nobody /dev/null "$w/cg.out"
	valgrind --tool=callgrind --callgrind-out-file="$w/cg.out" "$b/tracer-aggregator" \
		--socket "$w/s.sock" --db "$w/b.db" --user nobody --collector-user root \
		--log-level warn 2>"$w/valgrind.log" &
	agg=$!
	while [ ! -S "$w/s.sock" ]; do sleep 0.05; done
	"$feeder" "$w/s.sock" 6000000 "$n" >/dev/null
	kill "$agg"
	wait "$agg" || true
	awk '/^summary:/ {print $2}' "$w/cg.out"
	rm -rf "$w"
}

for b in "$@"; do
	b=$(realpath "$b")
	i_small=$(instructions "$b" "$small")
	i_large=$(instructions "$b" "$large")
	awk -v b="$b" -v s="$i_small" -v l="$i_large" -v n=$((large - small)) \
		'BEGIN { printf "%s: %.0f instructions per process (%d more processes: %d more instructions)\n", b, (l - s) / n, n, l - s }'
done
