# amt — adaptive metamorphic testing. See README.md.
GO      ?= go
BIN     ?= bin/amt
export CGO_ENABLED ?= 0

.PHONY: all build test vet bench rq1 rq2 rq3 clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/amt

# The test command CI runs (.ci/run). -short skips the long paper-scale runs.
test:
	$(GO) vet ./...
	$(GO) test -short -timeout 14m ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin
