#!/bin/bash
# make fuzz: runs every harness for SECONDS from its corpus, as many at once as
# there are cores (each is single-threaded). A crash fails the run and leaves the
# input beside the harness. With FUZZ_KEEP=1, what each run found that covers more is
# merged (minimised) into test/fuzz/corpus/NAME, to be committed: the corpus is kept.
# Usage: test/fuzz/run.sh FUZZ_BUILD SECONDS NAME...
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
	local n
	n=$(grep -E '^stat::number_of_executed_units' "$dir/fuzz_$f.log" | awk '{print $2}')
	echo "== fuzz_$f for ${seconds}s: $n inputs ($((n / seconds)) a second)"
	if [ "${FUZZ_KEEP:-0}" = 1 ]; then
		mkdir -p "$repo/test/fuzz/corpus/$f"
		(cd "$dir" && "./fuzz_$f" -merge=1 -max_len=8192 "$repo/test/fuzz/corpus/$f" \
			"corpus/$f" >"fuzz_$f.merge.log" 2>&1) &&
			echo "   kept in test/fuzz/corpus/$f: $(ls "$repo/test/fuzz/corpus/$f" | wc -l) inputs"
	fi
}
export -f run_one
export dir seconds repo FUZZ_KEEP
printf '%s\n' "$@" | xargs -P "$(nproc)" -I{} bash -c 'run_one {}'
