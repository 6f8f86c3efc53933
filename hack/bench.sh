#!/usr/bin/env bash
# Runs the plugins' benchmarks and prints a summary. See doc/performance.md.
#
#   hack/bench.sh                  # micro-benchmarks, then scheduler_perf 500Nodes
#   MICRO=0 PERF_COUNT=5 hack/bench.sh
#   PERF_SIZE=5000Nodes PERF_COUNT=1 hack/bench.sh
#
# Environment:
#   MICRO=1|0           run the micro-benchmarks (default 1)
#   MICRO_COUNT=5       -count for the micro-benchmarks
#   MICRO_BENCH=.       -bench regexp for the micro-benchmarks
#   PERF=1|0            run scheduler_perf (default 1)
#   PERF_COUNT=3        rounds of scheduler_perf; every round runs every profile
#                       once, starting one profile further each round, so that
#                       the profiles alternate and drift hits all of them
#   PERF_SIZE=500Nodes  workload: Smoke, 500Nodes or 5000Nodes
#   PERF_PROFILES="..." test cases of performance-config.yaml to run
#   PERF_REFS="A B"     git refs (commits, branches; WORKTREE for the working
#                       tree) to compare: one test binary is built from each,
#                       and every round runs each profile under every binary,
#                       alternated; each binary's data goes to perf-data/<n>-<ref>
#                       (default: the working tree alone, into perf-data)
#   OUT=_output/bench/<date>  where raw outputs go
#
# scheduler_perf needs etcd: bin/etcd from hack/install-envtest.sh (make envtest).
# The summary uses benchstat through `go run golang.org/x/perf/cmd/benchstat@latest`
# when the module proxy is reachable, and falls back to medians computed here.

set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

MICRO=${MICRO:-1}
MICRO_COUNT=${MICRO_COUNT:-5}
MICRO_BENCH=${MICRO_BENCH:-.}
PERF=${PERF:-1}
PERF_COUNT=${PERF_COUNT:-3}
PERF_SIZE=${PERF_SIZE:-500Nodes}
PERF_PROFILES=${PERF_PROFILES:-"Default NodeLessPods NodeLessPodsSelector SoftSpreadHostname Batching BatchingNodeLessPods"}
PERF_REFS=${PERF_REFS:-}
OUT=${OUT:-_output/bench/$(date -u +%Y%m%dT%H%M%SZ)}
GO=${GO:-go}

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

machine() {
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (dirty tree)')"
	echo "nproc: $(nproc)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
	echo "go: $($GO version)"
	echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
}
machine | tee "$OUT/machine.txt"

benchstat_cmd() {
	if command -v benchstat >/dev/null; then
		benchstat "$@"
	else
		$GO run golang.org/x/perf/cmd/benchstat@latest "$@"
	fi
}

# median FILE: reads "key value" lines, prints "key median n" sorted by key.
median() {
	sort -k1,1 -k2,2g "$1" | awk '
		function flush() { if (n > 0) { m = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2; printf "%s %.6g %d\n", key, m, n } }
		$1 != key { flush(); key = $1; n = 0 }
		{ v[++n] = $2 }
		END { flush() }'
}

if [[ $MICRO == 1 ]]; then
	echo
	echo "== micro-benchmarks (-count $MICRO_COUNT) -> $OUT/micro.txt"
	$GO test ./pkg/nodelesspods/ ./pkg/nodelesspods/podcount/ ./pkg/placementpolicy/ ./pkg/maintenancewindow/ ./pkg/normalize/ -run '^$' -bench "$MICRO_BENCH" \
		-benchmem -count "$MICRO_COUNT" -timeout 60m | tee "$OUT/micro.txt"
fi

if [[ $PERF == 1 ]]; then
	echo
	echo "== scheduler_perf $PERF_SIZE, $PERF_COUNT round(s) of: $PERF_PROFILES"
	if ! command -v etcd >/dev/null; then
		[[ -x bin/etcd ]] || { echo "etcd is not on PATH and bin/etcd is missing: run make envtest" >&2; exit 1; }
		PATH=$ROOT/bin:$PATH
	fi
	# One binary per ref, each run from its own source's package folder: the
	# config's paths are relative to it, and each ref has its own configs.
	bins=() srcs=() datas=()
	if [[ -z $PERF_REFS ]]; then
		$GO test -c -o "$OUT/scheduler_perf.test" ./test/integration/scheduler_perf/
		bins+=("$OUT/scheduler_perf.test") srcs+=("$ROOT") datas+=("$OUT/perf-data")
	else
		read -r -a refs <<<"$PERF_REFS"
		for ((i = 0; i < ${#refs[@]}; i++)); do
			ref=${refs[$i]} src=$ROOT
			if [[ $ref != WORKTREE ]]; then
				src="$OUT/src/$i"
				git worktree add --detach "$src" "$ref" >/dev/null
				echo "$ref: $(git -C "$src" rev-parse --short HEAD) in $src"
			fi
			(cd "$src" && $GO test -c -o "$OUT/scheduler_perf-$i.test" ./test/integration/scheduler_perf/)
			bins+=("$OUT/scheduler_perf-$i.test") srcs+=("$src") datas+=("$OUT/perf-data/$i-${ref//\//_}")
		done
	fi
	read -r -a profiles <<<"$PERF_PROFILES"
	: >"$OUT/perf.txt"
	mkdir -p "$OUT/artifacts"
	for ((round = 0; round < PERF_COUNT; round++)); do
		for ((k = 0; k < ${#profiles[@]}; k++)); do
			p=${profiles[$(((k + round) % ${#profiles[@]}))]}
			for ((j = 0; j < ${#bins[@]}; j++)); do
				b=$(((j + round) % ${#bins[@]}))
				echo "-- round $((round + 1))/$PERF_COUNT: $p/$PERF_SIZE${PERF_REFS:+ (${datas[$b]##*/})} (load average $(cut -d' ' -f1 /proc/loadavg))"
				# ARTIFACTS: the harness logs each workload to a file of its own there
				# and deletes it when the workload passes, instead of printing it.
				if ! (cd "${srcs[$b]}/test/integration/scheduler_perf" && ARTIFACTS="$OUT/artifacts" \
					"${bins[$b]}" -test.run '^$' -test.bench "^BenchmarkPerfScheduling\$/^$p\$/^$PERF_SIZE\$" \
						-test.benchtime 1x -test.timeout 60m \
						-perf-scheduling-label-filter "" -data-items-dir "${datas[$b]}" \
						>>"$OUT/perf-raw.txt" 2>>"$OUT/perf-klog.txt"); then
					echo "scheduler_perf failed for $p/$PERF_SIZE: see $OUT/perf-raw.txt and $OUT/artifacts" >&2
					exit 1
				fi
				# The harness reports through b.Log too: keep only the result lines.
				# With PERF_REFS the size is suffixed @<n>-<ref>, so that the summary keeps the binaries apart.
				grep -a "^BenchmarkPerfScheduling/$p/$PERF_SIZE" "$OUT/perf-raw.txt" | tail -n 1 |
					sed "s|^\(BenchmarkPerfScheduling/$p/$PERF_SIZE\)|\1${PERF_REFS:+@${datas[$b]##*/}}|" | tee -a "$OUT/perf.txt" | cut -c1-160
			done
		done
	done
	rm -f "${bins[@]}"
	for src in "${srcs[@]}"; do
		[[ $src == "$ROOT" ]] || git worktree remove --force "$src"
	done
fi

echo
echo "== summary (raw data in $OUT)"
if [[ -s $OUT/micro.txt ]]; then
	echo
	benchstat_cmd "$OUT/micro.txt" 2>/dev/null | tee "$OUT/micro-benchstat.txt" || {
		echo "(benchstat unavailable: medians of ns/op, allocs/op and custom units)"
		grep '^Benchmark' "$OUT/micro.txt" | awk '{ for (i = 3; i < NF; i += 2) print $1 "|" $(i + 1), $i }' >"$OUT/micro.kv"
		median "$OUT/micro.kv" | column -t
	}
fi
if [[ -s $OUT/perf.txt ]]; then
	echo
	echo "scheduler_perf medians over rounds (throughput in pods/s, attempt latency in ms):"
	# Lines look like:
	# BenchmarkPerfScheduling/Default/500Nodes-2  1  0 ns/op  12.3 SchedulingThroughput/Average ...
	grep '^BenchmarkPerfScheduling/' "$OUT/perf.txt" | awk '{
		split($1, part, "/"); sub(/-[0-9]+$/, "", part[3]); id = part[2] "/" part[3]
		for (i = 3; i < NF; i += 2) {
			u = $(i + 1)
			if (u == "SchedulingThroughput/Average") print id "|tput", $i
			if (u == "SchedulingThroughput/Perc50") print id "|tput50", $i
			if (u == "scheduler_scheduling_attempt_duration_ms/Perc50") print id "|p50", $i
			if (u == "scheduler_scheduling_attempt_duration_ms/Perc99") print id "|p99", $i
		}
	}' >"$OUT/perf.kv"
	median "$OUT/perf.kv" >"$OUT/perf.median"
	awk '
		{ split($1, k, "|"); v[k[1], k[2]] = $2; n[k[1]] = $3; if (!(k[1] in seen)) { seen[k[1]] = 1; order[++m] = k[1] } }
		END {
			printf "%-36s %4s %10s %8s %10s %10s\n", "profile/size", "n", "tput avg", "vs Default", "p50 ms", "p99 ms"
			for (i = 1; i <= m; i++) {
				id = order[i]; split(id, p, "/"); base = v["Default/" p[2], "tput"]
				ratio = (base > 0) ? sprintf("%.2f", v[id, "tput"] / base) : "-"
				printf "%-36s %4d %10.1f %8s %10.1f %10.1f\n", id, n[id], v[id, "tput"], ratio, v[id, "p50"], v[id, "p99"]
			}
		}' "$OUT/perf.median" | tee "$OUT/perf-summary.txt"
	if command -v jq >/dev/null && [[ -n $(find "$OUT/perf-data" -name '*.json' -print -quit 2>/dev/null) ]]; then
		echo
		# Our plugins, the in-tree ones they are compared with, and the test
		# binary's NoOp* plugins (test/integration/scheduler_perf/noop_test.go).
		echo "per-plugin execution time, ms (scheduler_plugin_execution_duration_seconds: timed in 10% of cycles, at most 1,000 observations a second kept; median of the rounds' averages):"
		# With PERF_REFS each binary's data is in a folder of its own, whose
		# name (@<n>-<ref>) follows the size.
		: >"$OUT/plugins.kv"
		while IFS= read -r f; do
			d=$(basename "$(dirname "$f")")
			jq -r --arg tag "$([[ $d == perf-data ]] || echo "@$d")" '.dataItems[] | select(.labels.Metric == "scheduler_plugin_execution_duration_seconds" and .data != null)
				| select(.labels.plugin == "NodeLessPods" or .labels.plugin == "PlacementPolicy" or (.labels.plugin | startswith("NoOp")) or .labels.plugin == "MaintenanceWindow" or .labels.plugin == "OnDemandShare" or .labels.plugin == "NodePoolQuota" or .labels.plugin == "NodeAffinity" or .labels.plugin == "PodTopologySpread" or .labels.plugin == "NodeResourcesBalancedAllocation")
				| "\(.labels.Name | split("/")[1:3] | join("/"))\($tag)|\(.labels.plugin)|\(.labels.extension_point) \(.data.Average)"' \
				"$f" >>"$OUT/plugins.kv"
		done < <(find "$OUT/perf-data" -name '*.json' | sort)
		median "$OUT/plugins.kv" | tr '|' ' ' | column -t | tee "$OUT/plugins-summary.txt"
		echo
		"$ROOT/hack/bench-ratios.sh" "$OUT" | tee "$OUT/ratios.txt" || true
	fi
fi
