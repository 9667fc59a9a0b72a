# The README names two entry points: `make demo` and `make test`.
SHELL := /usr/bin/env bash
export PATH := $(PATH):/usr/local/go/bin

# The version line: the Istio version this tree installs and reports is the istio.io/api
# version go.mod pins (hack/istio-version.sh); make generate stamps it where files spell it out.
VERSION     ?= $(shell hack/istio-version.sh)
GIT_REV     := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
GIT_TAG     := $(shell git describe --tags --always 2>/dev/null || echo unknown)
GIT_STATUS  := $(shell test -z "$$(git status --porcelain 2>/dev/null)" && echo Clean || echo Modified)
VERSION_PKG := github.com/istioctl-installer/istioctl/pkg/version
LDFLAGS     := -X $(VERSION_PKG).Version=$(VERSION) -X $(VERSION_PKG).GitRevision=$(GIT_REV) -X $(VERSION_PKG).BuildStatus=$(GIT_STATUS) -X $(VERSION_PKG).GitTag=$(GIT_TAG)
CLUSTER_STATE ?= $(CURDIR)/.cluster
# BIN is where build writes the binary: `make build VERSION=1.29.4 BIN=/tmp/istioctl-1.29.4`
# builds a second one that installs and reports 1.29.4 (the e2e tests' older side).
BIN         ?= bin/istioctl

.PHONY: build generate test e2e demo fuzz bench bench-crds bench-startup bench-spec bench-scale bench-render bench-fleet bench-revupgrade bench-upgrade conformance cluster-bin cluster-up cluster-down vet fmt clean

## build: bin/istioctl (or BIN), version-stamped and static. Without cgo the binary maps no libc or
## ld.so (1.5 MiB of every run's max RSS) and starts faster; it uses Go's own DNS resolver
## and user lookup, as upstream's release builds do.
build:
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/istioctl

## generate: regenerate generated files (the version line's stamps, the Base CRDs from istio.io/api, the charts' profiles)
generate:
	go generate ./...

## test: unit tests and the end-to-end tests on one shared local cluster (real istiod), in a loopback-only netns
test:
	hack/test.sh test

## e2e: the tests on the multi-cluster bed and on clusters of their own (faults), the harness's self-tests, a short fuzz run
e2e:
	hack/test.sh e2e

## fuzz: every fuzz target for FUZZTIME (2m) each
fuzz:
	hack/fuzz.sh $(or $(FUZZTIME),2m)

## bench: ours against upstream istioctl master: render, install, re-install, uninstall (writes docs/benchmarks.md)
bench:
	hack/bench.sh

## bench-crds: install time of Base alone with the CRDs before and since they carry the API's rules (BASE=23e45da)
bench-crds:
	hack/bench-crds.sh

## bench-startup: start-up time and max RSS of version --remote=false and manifest generate, this tree against BASE (main)
bench-startup:
	hack/bench-startup.sh

## bench-scale: install with 1/10/50 gateways, verify-install and precheck up to 10,000 pods (writes docs/benchmarks-scale.md)
bench-scale:
	hack/bench-scale.sh

## bench-spec: our spec resolution against upstream istioctl's, side by side in one run
bench-spec: build
	hack/bench-spec.sh

## bench-render: render's own cost (manifest generate minus start-up) and max RSS per profile, ours against upstream (RUNS, PROFILES)
bench-render: build
	UPSTREAM=$$(hack/upstream-istioctl.sh) hack/bench-render.sh

## bench-fleet: x fleet install of 3 clusters against upstream's steps in sequence, on a bed of its own (FLEET_RUNS)
bench-fleet:
	hack/bench.sh fleet

## bench-revupgrade: upgrade --strategy revision of 100 workloads in gated batches against upstream's canary steps (RUNS)
bench-revupgrade:
	hack/bench.sh revision-upgrade

## bench-upgrade: the in-place upgrade of the ambient profile node by node against upstream's istioctl upgrade (RUNS; no limit)
bench-upgrade:
	hack/bench.sh upgrade

## conformance: ours against upstream istioctl on the corpus of testdata/conformance (writes docs/conformance.md)
conformance:
	hack/conformance.sh

## demo: build, start the local cluster, install the default profile and verify it
demo: build cluster-bin
	hack/demo.sh

## cluster-bin: build (once per machine, cached, one module) etcd, kube-*, kubectl, kwok, pilot-discovery and helm into bin/
cluster-bin:
	hack/kube/build.sh

## cluster-up / cluster-down: start (replacing any running) or stop CLUSTERS (1) local control planes (state in .cluster/)
cluster-up: cluster-bin
	STATE=$(CLUSTER_STATE) CLUSTERS=$(or $(CLUSTERS),1) hack/kube/bed-up.sh

cluster-down:
	STATE=$(CLUSTER_STATE) hack/kube/bed-down.sh

vet:
	go vet ./...

fmt:
	gofmt -l -w cmd pkg operator

clean:
	rm -rf bin
