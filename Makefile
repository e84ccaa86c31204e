# amt — adaptive metamorphic testing. See README.md.
GO      ?= go
BIN     ?= bin/amt
export CGO_ENABLED ?= 0

RQ1 := rq1-classification rq1-detection
RQ2 := rq2-rotation-classification rq2-shear-classification rq2-rotation-detection rq2-shear-detection
RQ3 := rq3-classification rq3-detection
# The 10,000-image CIFAR-10 variants (detection has only its 158-image subset).
PAPER_SCALE := rq1-classification rq2-rotation-classification rq2-shear-classification rq3-classification

.PHONY: all build test vet bench bench-all bench-ort fuzz gpu-check gpu-check-build rq1 rq2 rq3 results compare regression gate-power gate-power-cover ablations paper-scale suite corruptions clean

all: build

# -buildvcs=false: the same sources give the same binary whether or not a
# run has just rewritten the committed results (a "modified" tree), so amt
# run's up-to-date check (its executable's sha256) holds across rebuilds.
build:
	$(GO) build -buildvcs=false -o $(BIN) ./cmd/amt

# The test command CI runs (.ci/run): the kernel sets of nn/kernels this host
# runs (avx512, avx2, generic), with the reason for any it cannot; every
# package in -short mode (nn/kernels tests each available set against the
# portable loops and the models' ONNX Runtime goldens, skipping an
# unavailable one saying so), the portable (no assembly) nn kernels, resampling and MR
# warp, the GPU build (-tags gpu: the CUDA kernels, then whole models, amt
# infer -device cuda, the error paths and a 20-image sweep with sut.device:
# cuda, through the fake driver built with the C compiler; the PTX check
# needs clang-14), then the golden checks in full — all five models against
# ONNX Runtime at batch 1 and batched, the ONNX fixtures (the zoo's
# architectures once more with each other available kernel set), and
# SqueezeNet's verdicts on the first 100 CIFAR images × 59 MRs; last the
# Kubernetes manifests, in their own module (deploy/kubernetes/validate: it
# needs the Kubernetes API types, amt does not). cmd/amt's TestSlurmCluster
# starts a one-node Slurm cluster (root and Debian's packages: .ci/run
# installs them; it skips elsewhere, fails under CI=true).
test:
	$(GO) test -count=1 -v -run '^TestKernelSetsListed$$' ./nn/kernels
	$(GO) vet ./...
	$(GO) vet -tags gpu ./...
	$(GO) test -short -timeout 14m ./...
	$(GO) test -short -tags noasm ./nn/kernels ./nn/preprocess ./mr
	$(GO) test -tags gpu ./nn/cuda
	$(GO) test -tags gpu -run 'Device|GPU' ./nn ./features ./cmd/amt
	$(GO) test -timeout 14m -run 'Golden|Manifest' ./nn ./sut ./experiments
	cd deploy/kubernetes/validate && $(GO) vet ./... && $(GO) test -timeout 10m ./...

# amt vs ONNX Runtime side by side: ms/img per model and the ratio amt/ORT.
# Needs node; installs onnxruntime-node into .cache/ortbench on first use.
bench: bench-ort
bench-ort:
	bash nn/ortbench/compare.sh

# The real-GPU acceptance check (docs/gpu.md): gpu-check-build puts the
# amt binary and the test binaries of the GPU packages, all -tags gpu, in
# GPU_CHECK_DIR, so that a GPU machine without Go or network can run
# nn/cuda/gpu-check.sh on them; gpu-check does both here.
GPU_CHECK_DIR ?= bin/gpu-check
gpu-check-build:
	mkdir -p $(GPU_CHECK_DIR)
	$(GO) build -tags gpu -o $(GPU_CHECK_DIR)/amt ./cmd/amt
	$(GO) test -c -tags gpu -o $(GPU_CHECK_DIR)/cuda.test ./nn/cuda
	$(GO) test -c -tags gpu -o $(GPU_CHECK_DIR)/nn.test ./nn
	$(GO) test -c -tags gpu -o $(GPU_CHECK_DIR)/features.test ./features
	$(GO) test -c -tags gpu -o $(GPU_CHECK_DIR)/amt.test ./cmd/amt
gpu-check: gpu-check-build
	sh nn/cuda/gpu-check.sh $(GPU_CHECK_DIR)

# Every package's benchmarks (compare runs with benchstat).
bench-all:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# A short run of each fuzz target (make fuzz FUZZTIME=10m for a long one),
# one after the other. Crashers land in the package's testdata/fuzz/ and
# then run with every go test as regression cases.
FUZZTIME ?= 30s
fuzz1 = $(GO) test -run '^$$' -fuzz '^$(1)$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s $(2)
fuzz:
	$(call fuzz1,FuzzLoad,./nn)
	$(call fuzz1,FuzzCIFAR10,./data)
	$(call fuzz1,FuzzIDX,./data)
	$(call fuzz1,FuzzCOCOJSON,./data)
	$(call fuzz1,FuzzConfig,./experiments)
	$(call fuzz1,FuzzFeatures,./experiments/record)
	$(call fuzz1,FuzzVerdictCSV,./experiments/record)
	$(call fuzz1,FuzzBaseline,./experiments/record)
	$(call fuzz1,FuzzReadJSONL,./bandit/ope)
	$(call fuzz1,FuzzTransform,./cmd/amt)
	$(call fuzz1,FuzzWarp,./mr)
	$(call fuzz1,FuzzParse,./mr)
	$(call fuzz1,FuzzParseGrid,./scenario)
	$(call fuzz1,FuzzPolicy,./bandit)
	$(call fuzz1,FuzzState,./bandit)

# One experiment end to end: the (cached) sweep, the agents, the figures and
# report. $(2) is the command that runs the agents: run (the default), or
# tune for an experiment whose agents amt tune tunes first (on tune.seeds),
# then runs on the evaluation seeds.
define experiment
	$(BIN) sweep -config experiments/configs/$(1).yaml
	$(BIN) $(or $(2),run) -config experiments/configs/$(1).yaml
	$(BIN) plot -config experiments/configs/$(1).yaml

endef

rq1: build
	$(foreach e,$(RQ1),$(call experiment,$(e)))
rq2: build
	$(foreach e,$(RQ2),$(call experiment,$(e)))
rq3: build
	$(foreach e,$(RQ3),$(call experiment,$(e)))

# The committed results (results/README.md): every experiment of rq1, rq2
# and rq3, the two exhaustive tables with their context features and
# grey-box blocks in results/sweeps/ (gzip -n: the same bytes for the same
# table; the suite's check replays its runs on them), every
# report redrawn from its folder, then the check that go test ./results
# (and so make test) runs: replaying the agents from the committed tables
# and redrawing must give the committed files; the README's results block
# is rewritten from them first. One command: about 15 minutes wall (4.5
# CPU minutes) with the sweeps cached, most of it RQ3's online runs, on the
# shared 2-core machine at load ≈ 20; cold sweeps add about 17 minutes.
RESULTS := $(RQ1) $(RQ2) $(RQ3)
results: build
	rm -rf $(addprefix results/,$(RESULTS))
	$(MAKE) rq1 rq2 rq3
	mkdir -p results/sweeps
	$(BIN) sweep -config experiments/configs/rq1-classification.yaml -csv results/sweeps/classification.csv -features results/sweeps/classification-features.f32 -sut-features results/sweeps/classification-sut.f32
	$(BIN) sweep -config experiments/configs/rq1-detection.yaml -csv results/sweeps/detection.csv -features results/sweeps/detection-features.f32 -sut-features results/sweeps/detection-sut.f32
	gzip -n -9 -f results/sweeps/classification.csv results/sweeps/classification-features.f32 results/sweeps/classification-sut.f32 results/sweeps/detection.csv results/sweeps/detection-features.f32 results/sweeps/detection-sut.f32
	for e in $(RESULTS); do $(BIN) plot -dir results/$$e || exit 1; done
	$(GO) test -count=1 -run TestREADMEResults ./results -update
	$(GO) test -count=1 ./results

# Agent comparison and ablations, replayed on the same cached sweep:
# every agent with its defaults, then the agents with options tuned on
# seeds 101-130 and evaluated on 1-10, then the regression experiment.
compare: build
	$(call experiment,compare-agents)
	$(call experiment,compare-tuned,tune)
	$(call experiment,regression)
# Regression testing: the SUT changes from SqueezeNet-1.1 to ResNet-20
# mid-stream; agents carried across the change vs fresh vs random, replayed
# on both SUTs' cached sweeps (minutes; the ResNet-20 sweep, once, ~1.5 min).
regression: build
	$(call experiment,regression)
# The gate power study of amt check (issue #33; results/gate-power and
# results/gate-power-cover, committed and checked by go test ./results):
# 8,000 CI cycles with hts as the check agent (make gate-power) and 2,400
# with cover (make gate-power-cover, 2.6 times the CPU time), replayed
# from the four Fashion-MNIST models' cached sweeps (the sweeps, cold, take
# about a minute each).
gate-power: build
	$(BIN) gate-power -config experiments/configs/gate-power.yaml
gate-power-cover: build
	$(BIN) gate-power -config experiments/configs/gate-power-cover.yaml
ablations: build
	$(foreach e,features-model features-independent features-phash features-none exploration hidden psi,$(call experiment,ablation-$(e)))

# The agent benchmark (results/suite/report.md): every agent × 10 seeds on
# 80 environments (10 systems under test × 4 scenarios × 2 objectives); the
# sweeps and every run are cached, so a second run only redraws. The
# Fashion-MNIST SUTs read Debian's dataset-fashion-mnist (.ci/run installs
# it: apt-get install dataset-fashion-mnist).
suite: build
	$(BIN) suite -config experiments/configs/suite.yaml

# The corruption report (docs/corruptions.md): ResNet-20 and
# SqueezeNet-1.1 on the 18 common corruptions × severities 1-5 over the
# 1,017 CIFAR-10 images: error and violation per corruption and severity,
# CE/mCE against ResNet-20 (corruption.reference), and the agents'
# estimates of the profile at 10 % of the sweep (9 passes). Cold sweeps:
# about 4 min (ResNet-20) and 30 min (SqueezeNet) on the shared 2 cores
# at load ≈ 15; the runs about a minute of CPU each (most of it hts).
CORRUPTIONS := corruptions-resnet20 corruptions-squeezenet
corruptions: build
	$(foreach e,$(CORRUPTIONS),$(call experiment,$(e)))

# All 10,000 CIFAR-10 test images (slow: hours on 2 cores).
paper-scale: build
	$(foreach e,$(addsuffix -paper-scale,$(PAPER_SCALE)),$(call experiment,$(e)))

clean:
	rm -rf bin
