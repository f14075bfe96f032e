#!/usr/bin/env bash
# Fuzzes each target of the Makefile's FUZZ_TARGETS for FUZZTIME and writes
# the executions of each as the "## Fuzzing" section at the end of FILE
# (default TESTING.md), replacing an earlier one. `make testing-md` runs it
# after the bad-input matrix.
#
#   scripts/fuzz-report.sh [FILE]
#   FUZZTIME=30s FUZZPARALLEL=1 scripts/fuzz-report.sh
#
# FUZZ_TARGETS (pkg:FuzzName ...) defaults to the Makefile's list;
# FUZZPARALLEL (workers) to go test's default, GOMAXPROCS. A target that
# fails (a crasher, saved under <pkg>/testdata/fuzz/) is reported as such
# and makes the script exit 1 after the table is written.
set -euo pipefail

cd "$(dirname "$0")/.."
file=${1:-TESTING.md}
fuzztime=${FUZZTIME:-10s}
targets=${FUZZ_TARGETS:-$(sed -n 's/^FUZZ_TARGETS *:= *//p' Makefile)}
go=${GO:-go}
if [ -z "$targets" ]; then
	echo "fuzz-report: no FUZZ_TARGETS (none in the Makefile either)" >&2
	exit 1
fi
parallel=()
workers="GOMAXPROCS ($(nproc))"
if [ -n "${FUZZPARALLEL:-}" ]; then
	parallel=(-parallel "$FUZZPARALLEL")
	workers=$FUZZPARALLEL
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
rows=""
status=0
total=0
for t in $targets; do
	pkg=${t%%:*}
	fn=${t##*:}
	echo "fuzz-report: $pkg $fn ($fuzztime)" >&2
	result=ok
	for attempt in 1 2; do
		if "$go" test -run '^$' -fuzz "^$fn\$" -fuzztime "$fuzztime" "${parallel[@]}" "./$pkg" >"$log" 2>&1; then
			[ $attempt = 2 ] && result="ok (second run; the first ended in Go's fuzzing deadline race)"
			break
		fi
		# Go's fuzzing coordinator (before Go 1.27) can fail a target with
		# a bare "context deadline exceeded" as -fuzztime expires under
		# load, writing no input (golang/go#75804): not a finding. A real
		# one writes its input ("Failing input written to") or prints
		# another failure; those count at once.
		if grep -q 'Failing input written to' "$log" || ! grep -q '^    context deadline exceeded$' "$log" ||
			grep -qE '^(panic:|    --- FAIL|        [a-z_]+\.go:[0-9]+:)' "$log"; then
			result="**failed** (see \`go test -run '^$fn\$' ./$pkg\`)"
			status=1
			tail -20 "$log" >&2
			break
		fi
		echo "fuzz-report: $fn ended in Go's fuzzing deadline race (golang/go#75804, no input written); running it again" >&2
		result="not judged: both runs ended in Go's fuzzing deadline race (golang/go#75804), no input written"
	done
	# The last progress line holds the totals:
	# "fuzz: elapsed: 10s, execs: 123456 (12345/sec), new interesting: 3 (total: 45)"
	last=$(grep -E '^fuzz: elapsed: .*execs: [0-9]+' "$log" | tail -1 || true)
	execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")
	newi=$(sed -nE 's/.*new interesting: ([0-9]+) \(total: ([0-9]+)\).*/\1 (corpus \2)/p' <<<"$last")
	execs=${execs:-0}
	total=$((total + execs))
	rows+="| \`$pkg\` | \`$fn\` | $execs | ${newi:--} | $result |"$'\n'
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
section="## Fuzzing

\`scripts/fuzz-report.sh\` on $(date -u +%Y-%m-%d), ${cpu:-unknown CPU}, $(nproc) cores: each target of the
Makefile's \`FUZZ_TARGETS\` for $fuzztime (fuzzing workers: $workers), $total executions in all. \`make fuzz\` runs
the same targets for longer (\`FUZZTIME\`, default 30 s); their seed corpora run in \`make test\`.

| package | target | executions | new interesting | result |
|---|---|---|---|---|
$rows"

# Replace an earlier section (from its heading to the end of the file).
if [ -f "$file" ]; then
	tmp=$(mktemp "$file.XXXXXX")
	awk '/^## Fuzzing$/ { exit } { print }' "$file" >"$tmp"
	# Keep exactly one blank line before the new section.
	sed -i -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$tmp"
	printf '\n%s' "$section" >>"$tmp"
	chmod 644 "$tmp"
	mv "$tmp" "$file"
else
	printf '%s' "$section" >"$file"
fi
echo "fuzz-report: $total executions in all; wrote $file" >&2
exit $status
