#!/bin/bash
# make lint: cppcheck and clang-tidy over every C source of the programs (not the BPF
# side, which clang checks when it compiles it, nor generated code under build/),
# clang-format over every C file in the repository, and sizes.py's limits (no C file
# over 600 lines, no function over 80) over every C file too.
# Any finding fails. Usage: test/lint/run.sh BUILD_DIR
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.."
sources=$(git ls-files 'collector/*.c' 'aggregator/*.c' 'shipper/*.c' 'common/*.c' 'cli/*.c')
flags=(-std=c11 -D_GNU_SOURCE -I. -I"$build" -I"$build/proto")
status=0

echo "== layers"
python3 test/lint/layers.py || status=1
python3 test/lint/test_layers.py || status=1
python3 test/lint/sizes.py || status=1
python3 test/lint/test_sizes.py || status=1
python3 test/lint/call_loops.py "$build" || status=1
python3 test/lint/owners.py || status=1
python3 test/lint/root_window.py "$build" || status=1

echo "== cppcheck $(cppcheck --version | cut -d' ' -f2)"
# cppcheck takes two minutes over the BPF object embedded in the generated skeleton (3 MB
# of string escapes): it reads a copy of the skeleton whose object is an empty string,
# same declarations and code otherwise.
lint_include="$build/lint"
mkdir -p "$lint_include"
awk '/return \(const void \*\)"\\$/ { sub(/"\\$/, "\"\";"); print; blob = 1; next }
	blob { if (/";$/) blob = 0; next }
	{ print }' "$build/tracer.skel.h" >"$lint_include/tracer.skel.h"
# -D fixes the protobuf-c version the generated header checks (its value comes from a
# system header cppcheck does not read), which also limits it to one configuration.
if ! cppcheck --quiet --std=c11 --enable=warning,portability,performance --inline-suppr \
	--library=test/lint/cppcheck.cfg -I"$lint_include" "${flags[@]:1}" -DPROTOBUF_C_VERSION_NUMBER=1004001 \
	--suppress=missingIncludeSystem --error-exitcode=1 -j "$(nproc)" $sources; then
	echo "cppcheck: findings above" >&2
	status=1
fi

echo "== clang-tidy $(clang-tidy --version | sed -n 's/.*version \([0-9.]*\).*/\1/p' | head -1)"
# Generated code (the BPF skeleton, protobuf-c) is not ours to fix: findings whose
# location is under the build directory are shown but do not fail the run.
out=$(printf '%s\n' $sources | xargs -P "$(nproc)" -n 8 clang-tidy --quiet 2>/dev/null -- "${flags[@]}")
ours=$(grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' <<<"$out" | grep -v "^$build/\|/$build/" || true)
if [ -n "$ours" ]; then
	printf '%s\n' "$out"
	echo "clang-tidy: $(wc -l <<<"$ours") finding(s)" >&2
	status=1
fi
echo "== clang-format $(clang-format --version | sed -n 's/.*version \([0-9.]*\).*/\1/p')"
# The style in .clang-format, for every C file we wrote (BPF and tests included).
if ! git ls-files '*.c' '*.h' | xargs clang-format --dry-run --Werror; then
	echo "clang-format: run 'make format'" >&2
	status=1
fi
[ $status = 0 ] && echo "lint: clean"
exit $status
