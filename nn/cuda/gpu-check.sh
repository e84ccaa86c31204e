#!/bin/sh
# gpu-check.sh — amt's acceptance check on a real NVIDIA GPU.
#
#   nn/cuda/gpu-check.sh BUNDLE
#
# BUNDLE is the folder `make gpu-check-build` filled on a machine with the
# Go toolchain and the module cache: the amt binary and the test binaries
# of the GPU packages, all built with -tags gpu (CGO_ENABLED=0). Where this
# script runs it needs only this repository's files (the test binaries read
# their package's testdata), the assets and libcuda.so.1: no
# Go, no network, no module download. The assets are found as amt and the
# tests find them: $AMT_ASSETS and $AMT_SHARED, else shared/ beside the
# checkout or a folder above it. `make gpu-check` builds the bundle
# and runs the script in one step. It runs, in order:
#
#  1. the GPU tests against the real driver (AMT_GPU=1: a GPU that cannot
#     be opened is a failure, not a skip): package nn/cuda whole, and the
#     Device/GPU tests of nn, features and cmd/amt, as make test runs them
#     on the fake driver ($GPU_CHECK_RUN, a -test.run pattern, narrows
#     them);
#  2. the exhaustive sweep of $GPU_CHECK_IMAGES CIFAR-10 images (default
#     100) × the 59 follow-ups of the hierarchical scenario through the
#     paper's SqueezeNet ($GPU_CHECK_MODEL at $GPU_CHECK_INPUT_SIZE), once
#     with sut.device cpu and once with cuda, and
#     compares the verdict tables: the GPU sums in another order, so a
#     follow-up whose two top logits are within rounding of each other may
#     flip; more than $GPU_CHECK_MAX_DIFF differing rows per million
#     (default 1000, 0.1 %) fail the check;
#  3. the sweep of the timing data set ($GPU_CHECK_TIMING_DATA, default the
#     1,017 lossless CIFAR-10 images; cifar10/test_batch_10000_mixed.bin is
#     the paper's scale; $GPU_CHECK_TIMING_IMAGES > 0 takes the first ones)
#     with the SUT and the feature model on the GPU,
#     then on the CPU, each from an empty cache, and prints both wall times
#     and their ratio ($GPU_CHECK_TIMING=0 skips it).
#
# Each step prints "gpu-check: <step>: PASS|FAIL ..."; the script exits 1
# when any step failed. With GPU_CHECK_FAKE=1 it runs against the fake
# driver named by AMT_CUDA_LIB instead (without AMT_GPU=1, so the real-GPU
# tests skip): that is how make test runs this script on machines without a
# GPU (nn/cuda's TestGPUCheckScript).
set -u

usage() { echo "usage: $0 BUNDLE (a folder made by make gpu-check-build)" >&2; exit 2; }
[ $# -eq 1 ] || usage
[ -d "$1" ] || { echo "gpu-check: $1: not a folder; run make gpu-check-build first" >&2; exit 2; }
bundle=$(cd "$1" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
for f in amt cuda.test nn.test features.test amt.test; do
	[ -x "$bundle/$f" ] || { echo "gpu-check: $bundle/$f: missing; run make gpu-check-build" >&2; exit 2; }
done
images=${GPU_CHECK_IMAGES:-100}
maxdiff=${GPU_CHECK_MAX_DIFF:-1000}
timing=${GPU_CHECK_TIMING:-1}
timingData=${GPU_CHECK_TIMING_DATA:-cifar10/test_batch_first1017.bin}
timingImages=${GPU_CHECK_TIMING_IMAGES:-0}
model=${GPU_CHECK_MODEL:-models/cifar10_squeezenet1_1.onnx}
inputSize=${GPU_CHECK_INPUT_SIZE:-224}
fake=${GPU_CHECK_FAKE:-0}
if [ "$fake" = 1 ]; then
	: "${AMT_CUDA_LIB:?gpu-check: GPU_CHECK_FAKE=1 needs AMT_CUDA_LIB, the fake driver}"
	unset AMT_GPU
	echo "gpu-check: fake driver $AMT_CUDA_LIB (no real GPU is used)"
else
	export AMT_GPU=1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/amt-gpu-check.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
failed=0
pass() { echo "gpu-check: $1: PASS $2"; }
fail() { echo "gpu-check: $1: FAIL $2"; failed=1; }

# 1. The GPU tests. A test binary runs in its package's folder, as go test
# runs it, so that it finds its testdata.
runtests() { # name package-folder run-pattern
	log="$work/$1.log"
	if (cd "$repo/$2" && "$bundle/$1.test" -test.run "$3" -test.v -test.timeout 20m) >"$log" 2>&1; then
		if ! grep -q '^--- PASS' "$log"; then
			fail "tests $2" "(no test matched $3)"
			return
		fi
		pass "tests $2" "($(grep -c '^--- PASS' "$log") passed, $(grep -c '^--- SKIP' "$log") skipped)"
	else
		fail "tests $2" "(log follows)"
		grep -E '^(--- FAIL|FAIL|panic|\s+\S+_test.go:[0-9]+:)' "$log" | head -40
	fi
}
runtests cuda nn/cuda "${GPU_CHECK_RUN:-.}"
runtests nn nn "${GPU_CHECK_RUN:-Device|GPU}"
runtests features features "${GPU_CHECK_RUN:-Device|GPU}"
runtests amt cmd/amt "${GPU_CHECK_RUN:-Device|GPU}"

# sweep NAME DEVICE DATA LIMIT FEATURES — an exhaustive sweep of the
# model from an empty cache (LIMIT 0: every image); prints its wall time in
# seconds.
sweep() {
	dir="$work/$1"
	mkdir -p "$dir"
	limit=""
	[ "$4" -gt 0 ] && limit=", limit: $4"
	cat >"$dir/sweep.yaml" <<EOF
name: gpu-check-$1
case_study: classification
mode: replay
data: {format: cifar10, path: $3$limit}
sut: {model: $model, input_size: $inputSize, device: "$2"}
features: $5
action_set: hierarchical
agents: [random]
seeds: 1
output: $dir/results
cache: $dir/cache
EOF
	t0=$(date +%s.%N)
	if ! "$bundle/amt" sweep -config "$dir/sweep.yaml" -csv "$dir/table.csv" >"$dir/log" 2>&1; then
		tail -5 "$dir/log" >&2
		return 1
	fi
	t1=$(date +%s.%N)
	echo "$t0 $t1" | awk '{printf "%.1f", $2 - $1}'
}

# 2. The verdict tables of the CPU and the GPU.
if sweep table-cpu cpu cifar10/test_batch_first1017.bin "$images" "{kind: phash}" >/dev/null &&
	sweep table-cuda cuda cifar10/test_batch_first1017.bin "$images" "{kind: phash}" >/dev/null; then
	rows=$(($(wc -l <"$work/table-cpu/table.csv") - 1))
	paste -d '\n' "$work/table-cpu/table.csv" "$work/table-cuda/table.csv" |
		awk 'NR % 2 == 1 { a = $0; next } a != $0 { print "  cpu  " a; print "  cuda " $0 }' >"$work/differing"
	diff=$(($(wc -l <"$work/differing") / 2))
	if [ "$rows" -ne $((images * 59)) ]; then
		fail "verdict table" "the CPU's table has $rows rows, want $((images * 59))"
	elif [ $((diff * 1000000)) -gt $((maxdiff * rows)) ]; then
		fail "verdict table" "$diff of $rows rows differ between sut.device cpu and cuda (at most $maxdiff per million allowed)"
		head -20 "$work/differing"
	else
		pass "verdict table" "($diff of $rows rows differ between cpu and cuda; at most $maxdiff per million allowed)"
	fi
else
	fail "verdict table" "a sweep failed (its last lines are above)"
fi

# 3. Timing: the same sweep on the GPU, then on the CPU.
if [ "$timing" = 1 ]; then
	feats='{kind: model, model: models/features512_squeezenet1_1.onnx, device: "cuda"}'
	if g=$(sweep time-cuda cuda "$timingData" "$timingImages" "$feats"); then
		feats='{kind: model, model: models/features512_squeezenet1_1.onnx}'
		if c=$(sweep time-cpu cpu "$timingData" "$timingImages" "$feats"); then
			n=$(($(wc -l <"$work/time-cpu/table.csv") - 1))
			if cmp -s "$work/time-cpu/table.csv" "$work/time-cuda/table.csv"; then same="identical"; else same="not identical"; fi
			pass "timing" "$(echo "$g $c $n" | awk '{printf "%d follow-ups: GPU %.1f s, CPU %.1f s, CPU/GPU %.2f×", $3, $1, $2, $2 / ($1 > 0 ? $1 : 1)}') ($(nproc) CPU cores; tables $same)"
		else
			fail "timing" "the CPU sweep failed"
		fi
	else
		fail "timing" "the GPU sweep failed"
	fi
fi

if [ "$failed" = 1 ]; then
	echo "gpu-check: FAIL"
	exit 1
fi
echo "gpu-check: PASS"
