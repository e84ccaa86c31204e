#!/usr/bin/env bash
# compare.sh runs amt's Go model benchmarks, once per kernel set, and ONNX
# Runtime (ortbench.mjs) on the same workloads in one run, in alternating
# rounds, and prints the host (CPU, kernel sets, measured FMA peak, load
# average; from hostinfo) and per workload ONNX Runtime's and each set's
#   ms/img, GFLOP/s, % of the host's FMA peak, and amt/ORT (the ratio of
#   the times)
# and then, round by round, each set's amt/ORT and in how many rounds amt
# was as fast or faster (the medians hide spells of a shared machine that
# fell on one side of a round only).
# Missing Go benchmarks (or a Go side that does not build yet) show "n/a".
#
# Usage: bash nn/ortbench/compare.sh            (from anywhere in the repo)
#        bash nn/ortbench/compare.sh -table ORT_OUT HOST_OUT SET=GO_OUT...
#             (only the table, from saved outputs of ortbench.mjs, hostinfo
#             and go test -bench per kernel set; HOST_OUT may be empty)
#
# Environment:
#   ORT_DIR        folder whose node_modules holds onnxruntime-node
#                  (default <repo>/.cache/ortbench; installed there on the
#                  first run with npm ... --ignore-scripts, which needs the
#                  npm registry once)
#   ORT_VERSION    onnxruntime-node version to install (default 1.30.0)
#   BENCH_SETS     amt's kernel sets to time, space-separated (default: the
#                  assembly sets this CPU runs, avx512 and/or avx2, else
#                  generic; see go run ./nn/ortbench/hostinfo)
#   BENCH_COUNT    rounds (default 5): each times every workload once per
#                  kernel set (go test -count 1) and once with ORT
#                  (ortbench.mjs -count 1); the table shows the median of
#                  the rounds' mean ms/img
#   GO_BENCHTIME   go test -benchtime for the Go side (default 1s)
#   ORT_MINTIME    seconds per repetition for ORT (default 1)
#   ORT_SPIN       1 (default): ONNX Runtime's idle threads spin-wait (its
#                  default); 0: they block (better on a busy shared machine)
#   BENCH_RUN      regexp selecting workloads, e.g. 'squeezenet' (default all)
#   BENCH_THREADS  threads of each side (Go: AMT_THREADS and GOMAXPROCS;
#                  ORT: intraOpNumThreads; the FMA peak is measured on as
#                  many; default 2)
#   GO             go command (default go)
#   AMT_SHARED     the shared folder with assets/models (default: found
#                  beside the repository or a parent folder)
# The raw outputs are kept in $ORT_DIR/last-{ort,host,go-SET}.txt.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ort_dir=${ORT_DIR:-$repo/.cache/ortbench}
ort_version=${ORT_VERSION:-1.30.0}
go_cmd=${GO:-go}
count=${BENCH_COUNT:-5}
go_benchtime=${GO_BENCHTIME:-1s}
ort_mintime=${ORT_MINTIME:-1}
ort_spin=${ORT_SPIN:-1}
run_re=${BENCH_RUN:-.}
threads=${BENCH_THREADS:-2}

die() { echo "compare.sh: $*" >&2; exit 1; }

case $count in
'' | *[!0-9]* | 0*) die "BENCH_COUNT=$count: want a positive number of rounds, e.g. 5" ;;
esac

# table ORT_OUTPUT HOST_OUTPUT SET=GO_OUTPUT... prints the comparison
# table: per workload and side the median over the repeated (-count)
# benchmark lines of their mean ms/img, and, given hostinfo's output (flops
# per image, FMA peak), its GFLOP/s and percentage of the peak, and for
# each kernel set amt/ORT; workload order: ORT's list, then any Go-only
# workloads.
table() {
	local ort=$1 host=$2
	shift 2
	local names="" files=() a
	for a in "$@"; do
		case $a in
		*=*) names="$names ${a%%=*}"; files+=("${a#*=}") ;;
		*) die "table: $a is not SET=GO_OUTPUT" ;;
		esac
	done
	awk -v names="$names" '
	# value of the field just before the unit "ms/img"
	function msimg(   i) { for (i = 2; i <= NF; i++) if ($i == "ms/img") return $(i - 1); return "" }
	# median of the space-separated numbers in s
	function median(s,   v, k, i, j, t) {
		k = split(s, v, " ")
		for (i = 2; i <= k; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		return (k % 2) ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
	}
	BEGIN { nsets = split(names, set, " ") }
	FNR == 1 { for (f = 1; f < ARGC; f++) if (ARGV[f] == FILENAME) file = f }
	file == 1 && $1 ~ /^BenchmarkORT\// {
		name = $1; sub(/^BenchmarkORT\//, "", name)
		v = msimg(); if (v == "") next
		if (!(name in ort)) order[++n] = name
		ort[name] = ort[name] " " v
	}
	file == 2 && $1 == "peak" { peak = $2 + 0 }
	file == 2 && $1 == "flops" { flops[$2] = $3 + 0 }
	file >= 3 && $1 ~ /^BenchmarkModels\// {
		name = $1; sub(/^BenchmarkModels\//, "", name); sub(/-[0-9]+$/, "", name)
		v = msimg(); if (v == "") next
		if (!(name in seen)) { seen[name] = 1; goorder[++m] = name }
		amt[file - 2, name] = amt[file - 2, name] " " v
	}
	END {
		printf "%-21s %26s", "", "ONNX Runtime"
		for (s = 1; s <= nsets; s++) printf " | %-34s", "amt " set[s]
		printf "\n%-14s %6s %8s %8s %8s", "model", "batch", "ms/img", "GFLOP/s", "% peak"
		for (s = 1; s <= nsets; s++) printf " | %8s %8s %7s %8s", "ms/img", "GFLOP/s", "% peak", "amt/ORT"
		printf "\n"
		for (i = 1; i <= n; i++) row(order[i])
		for (i = 1; i <= m; i++) if (!(goorder[i] in ort)) row(goorder[i])
		# Round by round: the slow spells of a shared machine can fall on one
		# side of a round and not the other, which the medians hide.
		printf "# amt/ORT round by round (the two sides of a round run seconds apart):\n"
		for (i = 1; i <= n; i++) rounds(order[i])
	}
	# rounds prints the amt/ORT of name per round: the k-th value of each side.
	function rounds(name,   s, k, line, le, nr, o, a, no, na) {
		line = sprintf("# %-16s", name)
		no = split(ort[name], o, " ")
		for (s = 1; s <= nsets; s++) {
			le = 0; nr = 0
			line = line sprintf(" | %s", set[s])
			na = split(amt[s, name], a, " ")
			for (k = 1; k <= no && k <= na; k++) {
				if (o[k] <= 0) continue
				nr++
				if (a[k] + 0 <= o[k] + 0) le++
				line = line sprintf(" %.2f", a[k] / o[k])
			}
			line = line (nr ? sprintf(" (≤ 1.0 in %d of %d)", le, nr) : " n/a")
		}
		print line
	}
	# gflops returns the GFLOP/s of name at ms milliseconds per image ("" if unknown)
	function gflops(name, ms) { return (ms != "" && ms > 0 && (name in flops)) ? flops[name] / ms / 1e6 : "" }
	function pct(g) { return (g != "" && peak > 0) ? sprintf("%.0f", 100 * g * 1e9 / peak) : "n/a" }
	function num(x, f) { return x == "" ? "n/a" : sprintf(f, x) }
	function row(name,   model, batch, o, a, s, g) {
		model = name; batch = ""
		if (match(name, /\/b[0-9]+$/)) { model = substr(name, 1, RSTART - 1); batch = substr(name, RSTART + 2) }
		o = (name in ort) ? median(ort[name]) : ""
		g = gflops(name, o)
		printf "%-14s %6s %8s %8s %8s", model, batch, num(o, "%.3f"), num(g, "%.1f"), pct(g)
		for (s = 1; s <= nsets; s++) {
			a = ((s, name) in amt) ? median(amt[s, name]) : ""
			g = gflops(name, a)
			printf " | %8s %8s %7s %8s", num(a, "%.3f"), num(g, "%.1f"), pct(g), (a != "" && o != "" && o > 0) ? sprintf("%.2f", a / o) : "n/a"
		}
		printf "\n"
	}
' "$ort" "$host" "${files[@]}"
}

if [ "${1:-}" = "-table" ]; then
	[ $# -ge 4 ] || die "usage: compare.sh -table ORTBENCH_OUTPUT HOSTINFO_OUTPUT SET=GO_BENCH_OUTPUT..."
	shift
	table "$@"
	exit 0
fi
[ $# -eq 0 ] || die "unexpected arguments: $* (configure with environment variables, see the header)"

command -v node >/dev/null || die "node (>= 18) is needed for the ONNX Runtime side; it is not on PATH"
mkdir -p "$ort_dir"
if [ ! -f "$ort_dir/node_modules/onnxruntime-node/package.json" ]; then
	command -v npm >/dev/null || die "npm is needed once to install onnxruntime-node into $ort_dir"
	echo "# installing onnxruntime-node@$ort_version into $ort_dir" >&2
	npm install --prefix "$ort_dir" --no-save --no-audit --no-fund --ignore-scripts \
		"onnxruntime-node@$ort_version" >&2 ||
		die "npm install onnxruntime-node@$ort_version failed (offline? set ORT_DIR to a folder where it is installed)"
fi

ort_out=$ort_dir/last-ort.txt
host_out=$ort_dir/last-host.txt

echo "# load average at the start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a)" >&2
# The host, the kernel sets, the FMA peak and the work per image.
if ! (cd "$repo" && GOMAXPROCS=$threads "$go_cmd" run ./nn/ortbench/hostinfo -threads "$threads" -run "$run_re") >"$host_out" 2>&1; then
	echo "# hostinfo failed (GFLOP/s and % of peak: n/a); tail of $host_out:" >&2
	tail -n 5 "$host_out" | sed 's/^/#   /' >&2
	: >"$host_out"
fi
grep '^#' "$host_out" >&2 || true
sets=${BENCH_SETS:-$(sed -n 's/^sets //p' "$host_out")}
sets=${sets:-generic}
available=$(sed -n 's/^available //p' "$host_out")
for set in $sets; do
	# An unavailable set would silently run another one under its name.
	case " $available " in
	*" $set "*) ;;
	*) [ -z "$available" ] || die "BENCH_SETS: kernel set $set is not available here (available: $available)" ;;
	esac
done

# Rounds: each runs every kernel set's Go benchmarks once (-count 1), then
# ORT once (never two at once: they would share the CPUs), so that a slow
# spell of a shared machine, which lasts minutes on the VMs we measured on,
# falls on both sides instead of on whichever ran then; the table takes
# each side's median over the rounds. The Go test binary is built once.
go_re="^BenchmarkModels\$/$run_re"
go_procs=$threads
go_bin=$ort_dir/nn.test
go_ok=1
if ! (cd "$repo" && "$go_cmd" test -c -o "$go_bin" ./nn) >"$ort_dir/last-go-build.txt" 2>&1; then
	echo "# the Go benchmarks do not build (amt: n/a); tail of $ort_dir/last-go-build.txt:" >&2
	tail -n 5 "$ort_dir/last-go-build.txt" | sed 's/^/#   /' >&2
	go_ok=0
fi
tables=()
for set in $sets; do
	: >"$ort_dir/last-go-$set.txt"
	tables+=("$set=$ort_dir/last-go-$set.txt")
done
: >"$ort_out"
for round in $(seq "$count"); do
	echo "# round $round of $count, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a)" >&2
	for set in $sets; do
		go_out=$ort_dir/last-go-$set.txt
		[ "$go_ok" = 1 ] || continue
		[ "$round" != 1 ] || echo "#   AMT_KERNELS=$set AMT_THREADS=$threads GOMAXPROCS=$go_procs go test ./nn -run '^\$' -bench '$go_re' -benchtime $go_benchtime -count 1 -benchmem" >&2
		if ! (cd "$repo/nn" && AMT_KERNELS=$set AMT_THREADS=$threads GOMAXPROCS=$go_procs "$go_bin" -test.run '^$' -test.bench "$go_re" -test.benchtime "$go_benchtime" -test.count 1 -test.benchmem) >>"$go_out" 2>&1; then
			echo "# the Go benchmarks failed (amt $set: n/a); tail of $go_out:" >&2
			tail -n 5 "$go_out" | sed 's/^/#   /' >&2
			go_ok=0
		fi
	done
	[ "$round" != 1 ] || echo "#   node nn/ortbench/ortbench.mjs -count 1 -mintime $ort_mintime -spin $ort_spin -threads $threads -run '$run_re'" >&2
	node "$repo/nn/ortbench/ortbench.mjs" -ort "$ort_dir" -count 1 -mintime "$ort_mintime" -spin "$ort_spin" -threads "$threads" -run "$run_re" >"$ort_out.round" ||
		die "ortbench.mjs failed (see above)"
	[ "$round" != 1 ] || grep '^#' "$ort_out.round" >&2 || true
	cat "$ort_out.round" >>"$ort_out"
	rm -f "$ort_out.round"
done

table "$ort_out" "$host_out" "${tables[@]}"
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a)" >&2
echo "# medians over $count rounds of the mean per call / batch; GFLOP/s: the convolutions' and GEMMs' 2·multiply-adds (as counted by nn/kernels) per image over that time; % peak: of the FMA peak above; raw outputs in $ort_dir/last-*.txt" >&2
