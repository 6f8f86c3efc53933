#!/usr/bin/env bash
# Prints, for every scheduler_perf round that hack/bench.sh recorded, the
# ratio of one plugin's average time per call to another's at an extension
# point, both from scheduler_plugin_execution_duration_seconds in the same
# cycles, then per pair and test case: the rounds, how many were at most
# 1.0, the median and the highest ratio. See doc/performance.md.
#
# Each round also shows, per plugin, how many calls in a thousand took 10 us
# or more (the histogram's first bucket ends at 10 us). The file holds no
# bucket counts, but its median is interpolated in that bucket: with c of N
# calls under 10 us, Perc50 = 10 us * (N/2) / c, so N-c is N * (1 - 5 us /
# Perc50). A call that the OS or the Go runtime interrupts takes 10 us to a
# few ms, against well under 1 us for a skip, so a round's average can be
# carried by one or two such calls: these columns say when.
#
# Last, each round's PreFilter calls that the metric holds, next to the
# round's seconds. The scheduler's metric recorder keeps at most 1,000
# observations between its once-a-second flushes and drops the rest; a
# sampled cycle on 500 nodes makes hundreds (Filter and Score are timed per
# node and plugin), so about one cycle a second is recorded, whatever the
# number of pods. A plugin's Perc50 is 5 us * N / c, N its calls and c
# those under 10 us: N is a multiple of the numerator of N / c in lowest
# terms. PreFilter comes first in a cycle, so its plugins are recorded in
# nearly the same cycles; the largest numerator among them is the count
# shown, a lower bound, exact when one plugin's slow calls share no factor
# with N ("?" when no plugin had a slow call).
#
#   hack/bench-ratios.sh _output/bench/<date>
#   RATIOS="PlacementPolicy/PreFilter:NodeAffinity/PreFilter" hack/bench-ratios.sh DIR
#
# RATIOS: space-separated pairs plugin/point:plugin/point (default below). A
# round where either plugin has no sample is left out. Needs jq.
set -o errexit -o nounset -o pipefail

DIR=${1:?usage: hack/bench-ratios.sh OUT_DIR (the folder hack/bench.sh wrote, with perf-data/)}
RATIOS=${RATIOS:-"PlacementPolicy/PreFilter:NodeAffinity/PreFilter PlacementPolicy/PreScore:NodeAffinity/PreScore NodeLessPods/Score:NodeResourcesBalancedAllocation/Score"}

command -v jq >/dev/null || { echo "hack/bench-ratios.sh needs jq" >&2; exit 1; }
# The harness names each file after the time it was written: sorted by
# name, the files are the rounds in the order they ran. With PERF_REFS,
# hack/bench.sh puts each binary's files in a folder of its own, whose name
# (@<n>-<ref>) follows the test case's.
files=$(find "$DIR/perf-data" -name '*.json' -printf '%f\t%p\n' 2>/dev/null | sort | cut -f2)
[[ -n $files ]] || { echo "no scheduler_perf data in $DIR/perf-data" >&2; exit 1; }

# One jq pass per file prints the round's ratio rows, then one "calls" row:
# the test case, the round's seconds and its PreFilter calls.
out=$(while IFS= read -r f; do
	d=$(basename "$(dirname "$f")")
	jq -r --arg ratios "$RATIOS" --arg tag "$([[ $d == perf-data ]] || echo "@$d")" '
		def data($items; $id): ($id | split("/")) as $k
			| first($items[] | select(.labels.plugin == $k[0] and .labels.extension_point == $k[1]) | .data) // null;
		# Calls of 10 us or more, per thousand (see the top of this file).
		def slow($d): $d.Perc50 | if . != null and . > 0 and . < 0.01 then (1 - 0.005 / .) * 1000 else -1 end;
		def calls($items; $point):
			[$items[] | select(.labels.extension_point == $point) | .data.Perc50 | select(. > 0.005 and . < 0.01) | . / 0.005
				| . as $x | first(range(1; 100001) as $n | ($n / $x) as $c | select(($c - ($c | round) | fabs) < 1e-6) | $n) // empty]
			| if length == 0 then "?" else max end;
		[.dataItems[] | select(.labels.Metric == "scheduler_plugin_execution_duration_seconds" and .data != null)] as $items
		| select($items | length > 0)
		| ($items[0].labels.Name | split("/")[1:3] | join("/") | . + $tag) as $case
		| ($ratios | split(" ")[] | select(length > 0) | split(":") as $pair
			| data($items; $pair[0]) as $a | data($items; $pair[1]) as $b
			| select($a != null and $b != null and $b.Average > 0)
			| "\($case) \($pair[0]) \($pair[1]) \($a.Average * 1000) \($b.Average * 1000) \($a.Average / $b.Average) \(slow($a)) \(slow($b))"),
		  "calls \($case) \(first(.dataItems[] | select(.labels.Metric == "SchedulingDuration") | .data.Duration) // 0) \(calls($items; "PreFilter"))"' "$f"
done <<<"$files")
rows=$(grep -v '^calls ' <<<"$out" || true)
rounds=$(grep '^calls ' <<<"$out" | cut -d' ' -f2-)
[[ -n $rows ]] || { echo "no round in $DIR has both plugins of any pair in: $RATIOS" >&2; exit 1; }

echo "per round (us per call; ratio = first / second; slow: calls of 10 us or more per thousand, first/second, - when the median is over 10 us):"
awk 'function pm(x) { return x < 0 ? "-" : sprintf("%.1f", x) }
	{ printf "%-52s %-26s %7.3f  %-38s %7.3f  %5.2f  slow %s/%s\n", $1, $2, $4, $3, $5, $6, pm($7), pm($8) }' <<<"$rows"
echo
echo "per pair and test case:"
printf "%-52s %-66s %6s %6s %6s %7s\n" "test case" "pair" rounds "<=1.0" median highest
sort -k1,1 -k2,2 -k3,3 -k6,6g <<<"$rows" | awk '
	function flush() {
		if (n == 0) return
		m = (n % 2) ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2
		printf "%-52s %-66s %6d %6d %6.2f %7.2f\n", key1, key2, n, ok, m, r[n]
	}
	{ k = $1 SUBSEP $2 SUBSEP $3 }
	k != key { flush(); key = k; key1 = $1; key2 = $2 " / " $3; n = 0; ok = 0 }
	{ r[++n] = $6; if ($6 <= 1.0) ok++ }
	END { flush() }'
echo
echo "PreFilter calls the metric holds per round, at least (it keeps at most 1,000 observations a second; see the top of this file):"
printf "%-52s %8s %8s\n" "test case" seconds calls
awk '{ printf "%-52s %8.1f %8s\n", $1, $2, $3 }' <<<"$rounds"
