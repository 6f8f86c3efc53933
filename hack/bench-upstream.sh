#!/usr/bin/env bash
# Runs long workloads of upstream's own scheduler_perf suites (the pinned
# k8s.io/kubernetes module's test cases, see
# test/integration/scheduler_perf/upstream) under the default profile, with
# all our plugins added, and with each alone, alternated over rounds, and
# prints with benchstat the throughput and the framework's time per cycle at
# each extension point, every profile against the first. See
# doc/performance.md.
#
#   hack/bench-upstream.sh                      # make bench-upstream
#   ROUNDS=1 PROFILES="default MaintenanceWindow" hack/bench-upstream.sh
#
# Environment:
#   ROUNDS=5        rounds; every round runs every profile once, starting one
#                   profile further each round, so that drift hits all of them
#   PROFILES="..."  profiles of -upstream-profiles, the first is the base
#   WORKLOADS="misc/SchedulingBasic/5000Nodes_10000Pods"
#                   <folder>/<test case>/<workload> of upstream's suites, a
#                   folder's / written as - (e.g. podgroup-gangscheduling/...)
#   OUT=_output/bench-upstream/<date>  where raw outputs go
#
# Needs etcd (make envtest) and jq; benchstat is run with go run when it is
# not installed.

set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

ROUNDS=${ROUNDS:-5}
PROFILES=${PROFILES:-"default all NodeLessPods PlacementPolicy MaintenanceWindow MaintenanceWindowOn1pct OnDemandShare"}
WORKLOADS=${WORKLOADS:-"misc/SchedulingBasic/5000Nodes_10000Pods"}
OUT=${OUT:-_output/bench-upstream/$(date -u +%Y%m%dT%H%M%SZ)}
GO=${GO:-go}

command -v jq >/dev/null || { echo "hack/bench-upstream.sh needs jq (apt-get install jq)" >&2; exit 1; }
if ! command -v etcd >/dev/null; then
	[[ -x bin/etcd ]] || { echo "etcd is not on PATH and bin/etcd is missing: run make envtest" >&2; exit 1; }
	PATH=$ROOT/bin:$PATH
fi
mkdir -p "$OUT/artifacts"
OUT=$(cd "$OUT" && pwd)
{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (dirty tree)')"
	echo "nproc: $(nproc), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/machine.txt"

pkg=test/integration/scheduler_perf/upstream
$GO test -c -o "$OUT/upstream.test" "./$pkg"
read -r -a profiles <<<"$PROFILES"
read -r -a workloads <<<"$WORKLOADS"
: >"$OUT/bench.txt"
: >"$OUT/throughput.txt"
for ((round = 0; round < ROUNDS; round++)); do
	for ((k = 0; k < ${#profiles[@]}; k++)); do
		p=${profiles[$(((k + round) % ${#profiles[@]}))]}
		for w in "${workloads[@]}"; do
			IFS=/ read -r folder tc name <<<"$w"
			data="$OUT/data/$round/$p"
			echo "-- round $((round + 1))/$ROUNDS: $p $w (load average $(cut -d' ' -f1 /proc/loadavg))"
			if ! (cd "$pkg" && ARTIFACTS="$OUT/artifacts" "$OUT/upstream.test" -test.run '^$' \
				-test.bench "^BenchmarkUpstream\$/^$folder\$/.*profile=$p\$/^$tc\$/^$name\$" -test.benchtime 1x \
				-test.timeout 60m -upstream-profiles "$p" -perf-scheduling-label-filter "" \
				-data-items-dir "$data" >>"$OUT/raw.txt" 2>>"$OUT/klog.txt"); then
				echo "$p $w failed: see $OUT/raw.txt and $OUT/artifacts" >&2
				exit 1
			fi
			# One benchstat line per run from the harness's data file:
			# throughput, and the framework's time per cycle at each
			# extension point (scheduler_framework_extension_point_duration_seconds,
			# sampled in 10% of cycles, averages in ms).
			jq -r --arg w "$w" --arg p "$p" '
				[.dataItems[] | select(.data != null)] as $items
				| ($items[] | select(.labels.Metric == "SchedulingThroughput") | .data.Average) as $tput
				| [$items[] | select(.labels.Metric == "scheduler_framework_extension_point_duration_seconds")
					| select(.labels.extension_point | IN("PreFilter", "Filter", "PreScore", "Score"))
					| "\(.data.Average) \(.labels.extension_point)-ms/cycle"] as $points
				| "BenchmarkUpstream/\($w | gsub("/"; "_"))/profile=\($p) 1 \($tput) pods/s \($points | join(" "))"' \
				"$data"/*.json | tee -a "$OUT/bench.txt" |
				awk -v r="$round" -v w="$w" -v p="$p" '{ print r, w, p, $3 }' >>"$OUT/throughput.txt"
		done
	done
done
rm -f "$OUT/upstream.test"

echo
echo "== benchstat, every profile against ${profiles[0]} (raw data in $OUT)"
order=$(
	IFS=' '
	echo "${profiles[*]}"
)
if command -v benchstat >/dev/null; then
	benchstat -col "/profile@($order)" "$OUT/bench.txt"
else
	$GO run golang.org/x/perf/cmd/benchstat@latest -col "/profile@($order)" "$OUT/bench.txt"
fi | tee "$OUT/benchstat.txt"

echo
echo "== throughput over ${profiles[0]}'s in the same round: median, then each round"
awk -v base="${profiles[0]}" '
	{ t[$1, $2, $3] = $4; rounds[$1] = 1; runs[$2, $3] = 1 }
	END {
		for (key in runs) {
			split(key, k, SUBSEP)
			for (r in rounds)
				if (t[r, k[1], base] > 0 && t[r, k[1], k[2]] > 0) printf "%s %s %.4f\n", k[1], k[2], t[r, k[1], k[2]] / t[r, k[1], base]
		}
	}' "$OUT/throughput.txt" | sort -k1,1 -k2,2 -k3,3g | awk '
	function flush() { if (n) printf "%-40s %-24s %5.2fx  per round, sorted:%s\n", w, p, (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2, list }
	$1 != w || $2 != p { flush(); w = $1; p = $2; n = 0; list = "" }
	{ v[++n] = $3; list = list sprintf(" %.2f", $3) }
	END { flush() }' | tee "$OUT/ratios.txt"
