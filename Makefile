# amt — adaptive metamorphic testing. See README.md.
GO      ?= go
BIN     ?= bin/amt
export CGO_ENABLED ?= 0

RQ1 := rq1-classification rq1-detection
RQ2 := rq2-rotation-classification rq2-shear-classification rq2-rotation-detection rq2-shear-detection
RQ3 := rq3-classification rq3-detection
# The 10,000-image CIFAR-10 variants (detection has only its 158-image subset).
PAPER_SCALE := rq1-classification rq2-rotation-classification rq2-shear-classification rq3-classification

.PHONY: all build test vet bench bench-all bench-ort fuzz rq1 rq2 rq3 compare ablations paper-scale clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/amt

# The test command CI runs (.ci/run): the kernel sets of nn/kernels this host
# runs (avx512, avx2, generic), with the reason for any it cannot; every
# package in -short mode (nn/kernels tests each available set against the
# portable loops and the models' ONNX Runtime goldens, skipping an
# unavailable one saying so), the portable (no assembly) nn kernels and MR
# warp, the GPU build (-tags gpu: the CUDA kernels through the fake driver
# nn/cuda builds with the C compiler; the PTX check needs clang-14), then the
# golden checks in full — all five models against ONNX Runtime at batch 1
# and batched, the ONNX fixtures (the zoo's architectures once more with
# each other available kernel set), and SqueezeNet's verdicts on the first
# 100 CIFAR images × 59 MRs.
test:
	$(GO) test -count=1 -v -run '^TestKernelSetsListed$$' ./nn/kernels
	$(GO) vet ./...
	$(GO) vet -tags gpu ./...
	$(GO) test -short -timeout 14m ./...
	$(GO) test -short -tags noasm ./nn/kernels ./mr
	$(GO) test -tags gpu ./nn/cuda
	$(GO) test -timeout 14m -run 'Golden|Manifest' ./nn ./sut ./experiments

# amt vs ONNX Runtime side by side: ms/img per model and the ratio amt/ORT.
# Needs node; installs onnxruntime-node into .cache/ortbench on first use.
bench: bench-ort
bench-ort:
	bash nn/ortbench/compare.sh

# Every package's benchmarks (compare runs with benchstat).
bench-all:
	$(GO) test -run '^$$' -bench . -benchmem ./...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzCIFAR10 -fuzztime 30s -fuzzminimizetime 5s ./data
	$(GO) test -run '^$$' -fuzz FuzzCOCOJSON -fuzztime 30s -fuzzminimizetime 5s ./data
	$(GO) test -run '^$$' -fuzz FuzzTransform -fuzztime 30s ./cmd/amt
	$(GO) test -run '^$$' -fuzz FuzzWarp -fuzztime 30s ./mr
	$(GO) test -run '^$$' -fuzz FuzzPolicy -fuzztime 30s ./bandit
	$(GO) test -run '^$$' -fuzz FuzzLoad -fuzztime 60s -fuzzminimizetime 10s ./nn

# One experiment end to end: the (cached) sweep, the agents, the figures and report.
define experiment
	$(BIN) sweep -config experiments/$(1).yaml
	$(BIN) run -config experiments/$(1).yaml
	$(BIN) plot -config experiments/$(1).yaml

endef

rq1: build
	$(foreach e,$(RQ1),$(call experiment,$(e)))
rq2: build
	$(foreach e,$(RQ2),$(call experiment,$(e)))
rq3: build
	$(foreach e,$(RQ3),$(call experiment,$(e)))

# Agent comparison and ablations, replayed on the same cached sweep.
compare: build
	$(call experiment,compare-agents)
ablations: build
	$(foreach e,features-model features-phash features-none exploration hidden psi,$(call experiment,ablation-$(e)))

# All 10,000 CIFAR-10 test images (slow: hours on 2 cores).
paper-scale: build
	$(foreach e,$(addsuffix -paper-scale,$(PAPER_SCALE)),$(call experiment,$(e)))

clean:
	rm -rf bin
