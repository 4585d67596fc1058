#!/bin/bash
# Compares the daemons' CPU per traced process between two builds, in
# alternating exec storms (the order flips every round, like bench.py's pairs):
#
#   sudo test/bench/daemon_cpu_ab.sh OLD_BUILD NEW_BUILD [PROCESSES] [ROUNDS]
#
# e.g. git worktree add /tmp/old HEAD~1 && make -C /tmp/old all, then
# test/bench/daemon_cpu_ab.sh /tmp/old/build build 40000 6. CPU is the time
# on a CPU of every thread of the daemon (/proc/PID/task/*/schedstat, in ns),
# read 0.6 s after the storm so batched commits are charged.
# SEED_TOOLS=N first fills each run's database with N tool names, as a
# long-lived host's database has them (every exec looks its name up).
set -euo pipefail
old=$(realpath "$1") new=$(realpath "$2") n=${3:-40000} rounds=${4:-6}
seed_tools=${SEED_TOOLS:-0}
storm="$new/helpers/storm"
[ "$(id -u)" = 0 ] || { echo "needs root (BPF)" >&2; exit 2; }

cpu_ns() { cat "/proc/$1/task/"*/schedstat | awk '{ns += $1} END {printf "%d\n", ns}'; }
# Minor page faults of the whole process (field 10 of /proc/PID/stat; comm has no spaces here).
faults() { awk '{print $10}' "/proc/$1/stat"; }

one_run() { # BUILD LABEL: prints "LABEL aggregator_ms collector_ms aggregator_faults"
	local b=$1 w
	w=$(mktemp -d)
	chmod 777 "$w"
	if [ "$seed_tools" -gt 0 ]; then # the aggregator makes the schema, then the names go in
		"$b/tracer-aggregator" --db "$w/b.db" --socket "$w/s.sock" --user nobody --log-level error &
		while [ ! -S "$w/s.sock" ]; do sleep 0.02; done
		kill $! && wait $! || true
		rm -f "$w/s.sock"
		seq 1 "$seed_tools" | awk '{printf "INSERT INTO tools VALUES (%d, \047prog%d\047, \047prog%d\047, NULL);\n", $1, $1, $1}' |
			(echo "BEGIN;"; cat; echo "COMMIT;") | runuser -u nobody -- sqlite3 "$w/b.db"
	fi
	"$b/tracer-aggregator" --socket "$w/s.sock" --db "$w/b.db" --user nobody --log-level warn &
	local agg=$!
	while [ ! -S "$w/s.sock" ]; do sleep 0.02; done
	# Measure from the collector's readiness (programs loaded, /proc snapshot
	# sent), not from a fixed sleep: on a slow day loading alone outlasted
	# 1.5 s and its CPU was charged to the storm.
	mkfifo "$w/ready"
	"$b/tracer-collector" --socket "$w/s.sock" --log-level warn --ready-fd 3 3>"$w/ready" &
	local col=$!
	read -r -n1 _ <"$w/ready" || true
	sleep 0.3
	local a0 c0 a1 c1 f0 f1
	a0=$(cpu_ns $agg) c0=$(cpu_ns $col) f0=$(faults $agg)
	"$storm" "$n" 2 /bin/true >/dev/null
	sleep 0.6
	a1=$(cpu_ns $agg) c1=$(cpu_ns $col) f1=$(faults $agg)
	kill $col && wait $col || true
	kill $agg && wait $agg || true
	rm -rf "$w"
	echo "$2 $(((a1 - a0) / 1000000)) $(((c1 - c0) / 1000000)) $((f1 - f0))"
}

for r in $(seq 1 "$rounds"); do
	if [ $((r % 2)) = 1 ]; then order="old new"; else order="new old"; fi
	for which in $order; do
		if [ "$which" = old ]; then one_run "$old" old; else one_run "$new" new; fi
	done
done | awk -v n="$n" '
	{ print; agg[$1] += $2; col[$1] += $3; flt[$1] += $4; runs[$1]++ }
	END {
		for (k in runs)
			printf "%s: aggregator %.2f us/process, collector %.2f us/process, aggregator %.3f page faults/process (%d runs of %d)\n",
			       k, agg[k] * 1000 / runs[k] / n, col[k] * 1000 / runs[k] / n, flt[k] / runs[k] / n, runs[k], n
	}'
