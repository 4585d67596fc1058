#!/bin/bash
# make fuzz: runs every harness for SECONDS from its corpus, as many at once as
# there are cores (each is single-threaded). A crash fails the run and leaves the
# input beside the harness. Usage: test/fuzz/run.sh FUZZ_BUILD SECONDS NAME...
set -uo pipefail
dir=$1 seconds=$2
shift 2
repo=$(cd "$(dirname "$0")/../.." && pwd)

run_one() {
	local f=$1
	mkdir -p "$dir/corpus/$f"
	cp -n "$repo/test/fuzz/corpus/$f/"* "$dir/corpus/$f/" 2>/dev/null || true
	# Built with -fno-sanitize-recover, UBSan stops at its first report; halt_on_error
	# and the log check make sure a report fails the run even if one check recovers.
	if ! (cd "$dir" && UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		"./fuzz_$f" -max_total_time="$seconds" -max_len=8192 \
		-print_final_stats=1 "corpus/$f" >"fuzz_$f.log" 2>&1) ||
		grep -q "runtime error:" "$dir/fuzz_$f.log"; then
		tail -40 "$dir/fuzz_$f.log"
		echo "fuzz_$f found a crash or undefined behaviour (input in $dir)"
		return 1
	fi
	echo "== fuzz_$f for ${seconds}s: $(grep -E '^stat::number_of_executed_units' "$dir/fuzz_$f.log" |
		awk '{print $2}') inputs"
}
export -f run_one
export dir seconds repo
printf '%s\n' "$@" | xargs -P "$(nproc)" -I{} bash -c 'run_one {}'
