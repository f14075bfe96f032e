# unlearn: see README.md. Every target installs what it needs.
GO       ?= go
BIN      := bin/unlearn
export CGO_ENABLED := 1

# The library the tests load. onnxrt searches only --ort-lib,
# ONNXRUNTIME_LIB and beside the executable, never the working directory, and
# test binaries are built outside bin/: name the repository's .ort/ unless
# ONNXRUNTIME_LIB is already set. (`make demo` runs bin/unlearn, which finds
# ../.ort/ by itself.)
ORT_LIB  := $(or $(ONNXRUNTIME_LIB),$(CURDIR)/.ort/libonnxruntime.so.1)
TEST_ENV := UNLEARN_REQUIRE_ORT=1 ONNXRUNTIME_LIB="$(ORT_LIB)"

.PHONY: all build ort ort-gpu deps test test-deploy test-slurm test-docker test-large test-short conformance fuzz testing-md demo demo-threads vet fmt generate clean

all: build

ort:
	@./scripts/fetch-ort.sh

# ONNX Runtime 1.29.0's GPU build (main library and CUDA provider, 330 MB to
# download) into .ort-gpu/, for --device cuda only; no other target needs it
# (the CUDA tests skip without it).
ort-gpu:
	@./scripts/fetch-ort-gpu.sh

deps:
	@./scripts/setup-deps.sh

build:
	$(GO) build -o $(BIN) ./cmd/unlearn

# The tests need ONNX Runtime and Debian's libonnx-testdata; UNLEARN_REQUIRE_ORT
# turns "library absent" from a skip into a failure.
test: deps ort
	$(GO) vet ./...
	$(TEST_ENV) $(GO) test -count=1 -timeout 30m ./...

# A single-node Slurm cluster on this machine runs a K = 2 audit as a job array
# through deploy/slurm/ and checks the gathered score against one process's
# (scripts/slurm-test.sh; needs root, installs slurm-wlm, munge and jq if
# missing, stops every daemon it started; ~2 min on 2 cores).
test-slurm: deps ort build
	ONNXRUNTIME_LIB="$(ORT_LIB)" ./scripts/slurm-test.sh

# The Dockerfile built with no registry (a Debian base made by debootstrap,
# this machine's bin/unlearn and .ort/), one shard of the same audit run in
# the container as its unprivileged user and checked against this machine's
# (scripts/docker-test.sh; needs root, installs docker.io and debootstrap if
# missing, stops the dockerd it started; ~1 min, plus ~2-6 min for the base
# the first time).
test-docker: deps ort build
	./scripts/docker-test.sh

# Both, as .ci/run runs them (issue 46).
test-deploy: test-slurm test-docker

# A model over 2 GB through external data, unlearned (needs ~20 GB of free memory,
# ~6 GB of disk, several minutes; not part of `make test`).
test-large: deps ort
	$(TEST_ENV) $(GO) test -count=1 -tags large -run TestLargeModel -timeout 90m -v ./cmd/unlearn/

# The ONNX conformance suite (libonnx-testdata) through onnxio and ONNX Runtime,
# with its pass/fail/skip summary and the reason for every skip.
conformance: deps ort
	$(TEST_ENV) $(GO) test -count=1 -v -run TestConformance ./internal/conformance | grep -v '^=== RUN\|^    --- PASS'

# Fuzzes the ONNX decoder, the dataset readers, the ids parser, the experiment
# file loader and the score task file reader for
# FUZZTIME each (the seed corpora also run in `make test`). New crashers land
# in <pkg>/testdata/fuzz/ and are then replayed by every test run.
FUZZTIME ?= 30s
FUZZ_TARGETS := onnxio:FuzzDecode internal/safetensors:FuzzRead data:FuzzIDX data:FuzzParseIDs data:FuzzParseForget data:FuzzMAT data:FuzzNPY experiment:FuzzLoad experiment:FuzzDecodeRecords unlearn/scoring:FuzzReadTask
fuzz:
	@for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; fn=$${t##*:}; \
	  echo "fuzz $$pkg $$fn ($(FUZZTIME))"; \
	  $(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) ./$$pkg || exit 1; \
	done

# Regenerates TESTING.md: the bad-input matrix (TestBadInputMatrix writes
# its table), then scripts/fuzz-report.sh appends the executions of each
# fuzz target. A FUZZTIME given to make reaches the script; otherwise its
# own default, 10 s per target, applies.
testing-md: ort
	$(TEST_ENV) UNLEARN_TESTING_MD=$(CURDIR)/TESTING.md $(GO) test -count=1 -run '^TestBadInputMatrix$$' ./cmd/unlearn
	@sed -n 's/.*\*\*\([0-9]*\) cases\*\*.*/bad-input cases: \1/p' TESTING.md
	$(TEST_ENV) GO=$(GO) ./scripts/hardening-report.sh TESTING.md
	FUZZ_TARGETS="$(FUZZ_TARGETS)" $(if $(filter-out file,$(origin FUZZTIME)),FUZZTIME=$(FUZZTIME)) GO=$(GO) ./scripts/fuzz-report.sh TESTING.md

test-short: ort
	ONNXRUNTIME_LIB="$(ORT_LIB)" $(GO) test -short ./...

demo: deps ort build
	./scripts/demo.sh

# The demo with --threads 1 and 2 against each other and the README's sample
# (issue 30's acceptance: within 1.5 points on forget and test accuracy).
demo-threads: deps ort build
	./scripts/demo-threads.sh

fmt:
	gofmt -l -w .

vet:
	$(GO) vet ./...

# Regenerates onnxio/onnxpb from onnx.proto (needs protoc and protoc-gen-go v1.36.12).
generate:
	$(GO) generate ./onnxio/...

clean:
	rm -rf bin out
