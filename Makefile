# Targets follow the upstream scheduler-plugins names. Everything a target
# needs is built from the Go modules pinned in go.mod.

SHELL := /usr/bin/env bash -o errexit -o pipefail -o nounset
GO ?= go
BIN_DIR := $(CURDIR)/bin

# KUBE_MINOR builds and tests against another Kubernetes minor (README.md,
# "Kubernetes versions"). Empty or the newest: go.mod. An older one: its
# k8s.io modules from go.$(KUBE_MINOR).mod, the files of the build tag
# kube$(KUBE_MINOR), its binaries in bin/$(KUBE_MINOR)/.
NEWEST_MINOR := 1.37
OLDER_MINORS := 1.36 1.35
KUBE_MINOR ?=
ifneq ($(filter-out $(NEWEST_MINOR),$(KUBE_MINOR)),)
ifeq ($(filter $(KUBE_MINOR),$(OLDER_MINORS)),)
$(error KUBE_MINOR=$(KUBE_MINOR) is not supported: use one of $(OLDER_MINORS) $(NEWEST_MINOR), or leave it empty for $(NEWEST_MINOR))
endif
MODFILE := go.$(KUBE_MINOR).mod
MINOR_FLAGS := -modfile=$(CURDIR)/$(MODFILE) -tags=kube$(KUBE_MINOR)
BIN_DIR := $(CURDIR)/bin/$(KUBE_MINOR)
else
MODFILE := go.mod
MINOR_FLAGS :=
endif

# The scheduler reports VERSION through --version and the version metric. Its
# Kubernetes base version stays first so that feature-gate compatibility logic,
# which parses this string, sees the minor (v1.37).
K8S_VERSION := $(shell $(GO) list $(MINOR_FLAGS) -m -f '{{.Version}}' k8s.io/kubernetes)
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo unknown)
GIT_COMMIT := $(shell git rev-parse --verify -q HEAD || echo unknown)
BUILD_DATE := $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(K8S_VERSION)+adminsched.$(VERSION) \
	-X k8s.io/component-base/version.gitCommit=$(GIT_COMMIT) \
	-X k8s.io/component-base/version.gitTreeState=$(if $(findstring dirty,$(VERSION)),dirty,clean) \
	-X k8s.io/component-base/version.buildDate=$(BUILD_DATE)

# The playground's engine (internal/playground itself) runs whole scenarios on
# a fresh cluster per row: it runs with the integration tests.
UNIT_PKGS := ./apis/... ./pkg/... $(filter-out github.com/adminsched/scheduler-plugins/internal/playground,$(shell $(GO) list ./internal/...)) ./cmd/scheduler/... ./cmd/license-driver/... ./cmd/placement-admission/... ./cmd/ondemandshare-controller/... ./cmd/maintenancewindow-controller/... ./cmd/nodepoolquota-controller/... ./hack/release-manifests/... ./test/integration/framework/...
# On an older minor: what ships for it (the plugins, their args, the binaries
# and the code they share); the playground runs on the newest minor.
# Without -race there: the race detector runs on the newest minor over the
# same code, and a race-instrumented second Kubernetes would cost CI about
# ten minutes cold.
RACE := -race
ifneq ($(MODFILE),go.mod)
UNIT_PKGS := ./apis/... ./pkg/... ./internal/pluginnames/... ./internal/schedtrace/... \
	./internal/licensedriver/... ./internal/controllerrun/... ./cmd/scheduler/... ./cmd/license-driver/... \
	./cmd/placement-admission/... ./cmd/ondemandshare-controller/... ./cmd/maintenancewindow-controller/... \
	./cmd/nodepoolquota-controller/...
RACE :=
endif

.PHONY: all
all: build

.PHONY: build
build: ## Build bin/kube-scheduler, bin/license-driver, bin/placement-admission, bin/ondemandshare-controller, bin/maintenancewindow-controller and bin/nodepoolquota-controller.
	$(GO) build $(MINOR_FLAGS) -ldflags "$(LDFLAGS)" -o $(BIN_DIR)/kube-scheduler ./cmd/scheduler
	$(GO) build $(MINOR_FLAGS) -ldflags "$(LDFLAGS)" -o $(BIN_DIR)/license-driver ./cmd/license-driver
	$(GO) build $(MINOR_FLAGS) -ldflags "$(LDFLAGS)" -o $(BIN_DIR)/placement-admission ./cmd/placement-admission
	$(GO) build $(MINOR_FLAGS) -ldflags "$(LDFLAGS)" -o $(BIN_DIR)/ondemandshare-controller ./cmd/ondemandshare-controller
	$(GO) build $(MINOR_FLAGS) -ldflags "$(LDFLAGS)" -o $(BIN_DIR)/maintenancewindow-controller ./cmd/maintenancewindow-controller
	$(GO) build $(MINOR_FLAGS) -ldflags "$(LDFLAGS)" -o $(BIN_DIR)/nodepoolquota-controller ./cmd/nodepoolquota-controller

# The descheduler is a nested module (descheduler/go.mod), so that importers of
# the scheduler plugins never inherit its dependencies. It reports upstream's
# release plus ours, as the scheduler does.
# An older minor's release tree has no descheduler/ (hack/release-minor.sh).
DESCHEDULER_MODULE := $(wildcard descheduler/go.mod)
DESCHEDULER_VERSION := $(if $(DESCHEDULER_MODULE),$(shell cd descheduler && $(GO) list -m -f '{{.Version}}' sigs.k8s.io/descheduler))
DESCHEDULER_LDFLAGS := -X sigs.k8s.io/descheduler/pkg/version.version=$(DESCHEDULER_VERSION)+adminsched.$(VERSION) \
	-X sigs.k8s.io/descheduler/pkg/version.gitsha1=$(GIT_COMMIT) \
	-X sigs.k8s.io/descheduler/pkg/version.buildDate=$(BUILD_DATE)

.PHONY: descheduler
descheduler: ## Build bin/descheduler: kubernetes-sigs/descheduler with our evictor plugin, from the nested module descheduler/ (newest minor only).
	cd descheduler && $(GO) build -ldflags "$(DESCHEDULER_LDFLAGS)" -o $(CURDIR)/bin/descheduler ./cmd/descheduler

IMAGE ?= adminsched/kube-scheduler:$(VERSION)
DOCKER ?= docker
# Comma-separated, as docker buildx takes them.
PLATFORMS ?= linux/amd64,linux/arm64
IMAGE_DIR ?= $(CURDIR)/_output/image
# docker, podman or buildah; empty: docker if its engine answers, else buildah
# or podman, else buildah installed from Debian's packages.
IMAGE_TOOL ?=
# The image's files and creation time, and its binary's build date, are the
# commit's time: one commit then gives the same layers on any machine.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
IMAGE_BUILD_DATE := $(shell date -u -d @$(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ)
IMAGE_LDFLAGS := $(subst version.buildDate=$(BUILD_DATE),version.buildDate=$(IMAGE_BUILD_DATE),$(LDFLAGS))
comma := ,
IMAGE_PLATFORMS := $(subst $(comma), ,$(PLATFORMS))
IMAGE_ARCHIVES := $(foreach p,$(IMAGE_PLATFORMS),$(IMAGE_DIR)/kube-scheduler-$(VERSION)-$(subst /,-,$(p)).oci.tar) $(IMAGE_DIR)/kube-scheduler-$(VERSION).oci.tar
IMAGE_ENV := GO=$(GO) MINOR_FLAGS="$(MINOR_FLAGS)" VERSION=$(VERSION) GIT_COMMIT=$(GIT_COMMIT) K8S_VERSION=$(K8S_VERSION) \
	LDFLAGS="$(IMAGE_LDFLAGS)" BUILD_DATE=$(IMAGE_BUILD_DATE) SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) \
	IMAGE=$(IMAGE) IMAGE_PLATFORMS="$(IMAGE_PLATFORMS)" IMAGE_DIR=$(IMAGE_DIR) IMAGE_TOOL=$(IMAGE_TOOL)

.PHONY: image
image: ## Build the scheduler image for $(PLATFORMS) (FROM scratch, static binary) into OCI archives under _output/image, tagged $(IMAGE) for this machine's platform; docker, buildah or podman (see build/README.md).
	$(IMAGE_ENV) hack/build-image.sh

# Without -race, as the integration tests: it reads about 180 MB of archives
# in one goroutine, and BenchmarkReadArchive ran 11-15 times slower with -race
# here. The package passes with -race too.
.PHONY: image-test
image-test: image ## Check the image archives: config, labels, files, modes, and the binary taken from the layer (--version, static).
	IMAGE_ARCHIVES="$(IMAGE_ARCHIVES)" IMAGE_VERSION=$(VERSION) IMAGE_PLATFORMS="$(IMAGE_PLATFORMS)" \
		$(GO) test -count=1 ./test/image/...

# A multi-platform image cannot be loaded into the engine's classic image
# store, so image-multiarch pushes by default; BUILDX_OUTPUT=--output=type=oci,dest=<file>
# writes an OCI archive instead (`make image` writes one with any tool).
BUILDX_OUTPUT ?= --push

.PHONY: image-multiarch
image-multiarch: ## Build and push $(IMAGE) for $(PLATFORMS) with docker buildx (cross-compiled, no emulation).
	$(IMAGE_ENV) hack/build-image.sh rootfs
	$(DOCKER) buildx build -f build/scheduler/Dockerfile \
		--platform $(PLATFORMS) \
		--build-arg VERSION=$(VERSION) \
		--build-arg GIT_COMMIT=$(GIT_COMMIT) \
		--build-arg BUILD_DATE=$(IMAGE_BUILD_DATE) \
		--build-arg K8S_VERSION=$(K8S_VERSION) \
		--build-arg CA_CERTIFICATES_VERSION=$$(cat $(IMAGE_DIR)/ca-certificates.version) \
		-t $(IMAGE) $(BUILDX_OUTPUT) $(IMAGE_DIR)/context

RELEASE_DIR ?= $(CURDIR)/_output/release

LICENSE_DRIVER_IMAGE ?= adminsched/license-driver:$(VERSION)

.PHONY: release-manifests
release-manifests: ## Render manifests/install with image $(IMAGE) into _output/release/all-in-one.yaml, and manifests/license-driver with $(LICENSE_DRIVER_IMAGE) into license-driver.yaml (kubectl apply -f).
	$(GO) run ./hack/release-manifests --kustomization manifests/install \
		--image $(IMAGE) --output $(RELEASE_DIR)/all-in-one.yaml
	$(GO) run ./hack/release-manifests --kustomization manifests/license-driver --image-name adminsched/license-driver \
		--image $(LICENSE_DRIVER_IMAGE) --output $(RELEASE_DIR)/license-driver.yaml

.PHONY: test
ifeq ($(MODFILE),go.mod)
test: unit-test integration-test upstream-perf-test doc-test browser-test image-test minors-test ## Run every test CI runs; with KUBE_MINOR=<older minor>, that minor's.
else
test: unit-test integration-test playground-test release-test
endif

# CI runs the whole suite on the newest minor and, within its time budget,
# each older minor's unit tests, the scheduler binary's integration tests on
# that minor's control plane, and its release tree.
# CI_STARTED (epoch seconds, .ci/run sets it) guards CI's 90 minutes: an
# older minor's tests build a second Kubernetes, about 25 minutes on a cold
# cache, so they are not started after MINORS_TEST_LATEST minutes; the log
# says so. Without CI_STARTED they always run.
MINORS_TEST_LATEST ?= 55
.PHONY: minors-test
minors-test: ## make test KUBE_MINOR=<m> for each older minor (OLDER_MINORS).
	@for m in $(OLDER_MINORS); do \
		if [ -n "$${CI_STARTED:-}" ] && [ $$(( ($$(date +%s) - CI_STARTED) / 60 )) -ge $(MINORS_TEST_LATEST) ]; then \
			echo "minors-test: KUBE_MINOR=$$m NOT RUN: CI has used $$(( ($$(date +%s) - CI_STARTED) / 60 )) of its 90 minutes (limit $(MINORS_TEST_LATEST)); run make test KUBE_MINOR=$$m"; \
			continue; \
		fi; \
		$(MAKE) --no-print-directory KUBE_MINOR=$$m test || exit 1; \
	done

# The playground on an older minor, as an operator runs it: bin/playground
# --kube-minor hands the command line to bin/$(KUBE_MINOR)/playground, which
# runs the policy tests of three shipped scenarios on that minor's control
# plane and scheduler.
PLAYGROUND_TEST_SCENARIOS := examples/scenarios/tutorial.yaml examples/scenarios/placement.yaml examples/scenarios/maintenance.yaml
.PHONY: playground-test
playground-test: envtest playground ## With KUBE_MINOR=<older minor>: bin/playground --kube-minor runs shipped policy tests on that minor.
	@test -n "$(KUBE_MINOR)" || { echo "playground-test needs KUBE_MINOR=<one of $(OLDER_MINORS)>"; exit 1; }
	$(GO) build -o $(CURDIR)/bin/playground ./cmd/playground
	$(CURDIR)/bin/playground --kube-minor $(KUBE_MINOR) test $(PLAYGROUND_TEST_SCENARIOS)

# The release tree (hack/release-minor.sh) builds, passes the plugins' tests,
# and a module of its own imports the plugins into that minor's stock
# kube-scheduler (hack/verify-importer.sh). Plain go: the tree's go.mod is
# the minor's, without tags.
RELEASE_TREE := $(CURDIR)/_output/release-$(KUBE_MINOR)/tree
.PHONY: release-test
# The release tree's pkg tests include the admission renderers', which run
# the minor's own API server (KUBEBUILDER_ASSETS).
release-test: envtest ## With KUBE_MINOR=<older minor>: its release tree builds, passes the plugins' tests and is importable.
	@test -n "$(KUBE_MINOR)" || { echo "release-test needs KUBE_MINOR=<one of $(OLDER_MINORS)>"; exit 1; }
	hack/release-minor.sh $(KUBE_MINOR) $(RELEASE_TREE)
	cd $(RELEASE_TREE) && $(GO) build ./... && KUBEBUILDER_ASSETS=$(BIN_DIR) $(GO) test -count=1 ./apis/... ./pkg/...
	hack/verify-importer.sh $(RELEASE_TREE)

# The docs' commands run as a newcomer's would: bin/ first on PATH, no
# KUBECONFIG or KUBEBUILDER_ASSETS (test/docs says how blocks are marked).
.PHONY: doc-test
doc-test: envtest helm kubectl karpenter build playground ## Run the command blocks of README.md and the docs it links, in a copy of the clone.
	$(GO) test -count=1 -timeout 40m ./test/docs/...

# The playground's HTML report in a real browser: headless Chromium from
# Debian's chromium package, which hack/install-chromium.sh installs when it
# may (root or passwordless sudo). When it cannot, it says why and the tests
# skip with their own message; once Chromium is there they must run.
.PHONY: browser-test
browser-test: envtest playground ## Load the playground's HTML reports in headless Chromium (installs Debian's chromium when missing).
	@if hack/install-chromium.sh; then export BROWSER_TEST_REQUIRED=1; else echo "browser-test: SKIPPED: no Chromium (above)"; fi; \
		$(GO) test -count=1 -timeout 15m ./test/browser/ -playground $(BIN_DIR)/playground -assets $(BIN_DIR)

# The screenshots in README.md, taken by the browser tests.
.PHONY: report-screenshots
report-screenshots: envtest playground ## Retake doc/images/playground-report.png and playground-compare.png with the browser tests.
	hack/install-chromium.sh
	BROWSER_TEST_REQUIRED=1 $(GO) test -count=1 -run 'TestTutorialReport|TestCompareReport' ./test/browser/ \
		-playground $(BIN_DIR)/playground -assets $(BIN_DIR) -screenshots $(CURDIR)/doc/images

.PHONY: unit-test
unit-test: envtest ## Unit tests with the race detector, including the fuzz seed corpora (the playground's apply and settle steps run theirs on the embedded cluster).
	KUBEBUILDER_ASSETS=$(BIN_DIR) $(GO) test $(MINOR_FLAGS) $(RACE) -count=1 $(UNIT_PKGS)
ifeq ($(MODFILE)$(DESCHEDULER_MODULE),go.moddescheduler/go.mod)
	cd descheduler && $(GO) test $(RACE) -count=1 ./...
endif

.PHONY: envtest
envtest: ## Build the embedded cluster (etcd, kube-apiserver, kube-controller-manager, kwok) from Go modules into bin/ (skipped when up to date).
	MODFILE=$(MODFILE) hack/install-envtest.sh $(BIN_DIR)

.PHONY: kubectl
kubectl: ## Build bin/kubectl from the k8s.io/kubernetes go.mod pins (skipped when up to date), to try bin/playground --keep by hand.
	MODFILE=$(MODFILE) hack/install-kubectl.sh $(BIN_DIR)

.PHONY: helm
helm: ## Build bin/helm from hack/tools/helm/go.mod (skipped when up to date).
	hack/install-helm.sh $(BIN_DIR)

.PHONY: karpenter
karpenter: ## Build bin/karpenter (Karpenter's KWOK provider) and bin/karpenter-crds/ from hack/tools/karpenter/go.mod (skipped when up to date).
	hack/install-karpenter.sh $(BIN_DIR)

.PHONY: integration-test
ifeq ($(MODFILE),go.mod)
integration-test: envtest helm kubectl karpenter build $(if $(DESCHEDULER_MODULE),descheduler) ## Tests on the embedded cluster: integration, the playground's engine and command (with the real kubectl), scheduler_perf smoke.
	PATH=$(BIN_DIR):$$PATH KUBEBUILDER_ASSETS=$(BIN_DIR) SCHEDULER_BINARY=$(BIN_DIR)/kube-scheduler LICENSE_DRIVER_BINARY=$(BIN_DIR)/license-driver \
		DESCHEDULER_BINARY=$(BIN_DIR)/descheduler \
		$(GO) test -count=1 -timeout 30m ./test/integration/... ./internal/playground ./cmd/playground/...
else
# An older minor: the tests of the scheduler binary, on that minor's control
# plane (bin/$(KUBE_MINOR)).
# helm is the same for every minor: bin/helm.
integration-test: envtest build ## With KUBE_MINOR=<older minor>: the scheduler binary's integration tests on that minor's control plane.
	hack/install-helm.sh $(CURDIR)/bin
	PATH=$(BIN_DIR):$$PATH KUBEBUILDER_ASSETS=$(BIN_DIR) SCHEDULER_BINARY=$(BIN_DIR)/kube-scheduler HELM_BINARY=$(CURDIR)/bin/helm \
		$(GO) test $(MINOR_FLAGS) -count=1 -timeout 30m ./test/integration/ -run '$(MINOR_INTEGRATION_TESTS)'
endif

# The tests that run the scheduler binary (SCHEDULER_BINARY), its install
# manifests with their ServiceAccount token, and the chart.
MINOR_INTEGRATION_TESTS := ^(TestBinary.*|TestInstall(Manifests|RBAC|Components|ReadOnlyRootFilesystem)|TestLeaderElection|TestMetrics|TestChart(Install|BadArgsAtStartUp|Metrics|TwoReleases|Upgrade|ProfilesSchedule))$$

# Only RunBenchmarkPerfScheduling takes a plugin registry, so upstream's
# suites run as benchmarks, once each (-benchtime=1x), on their
# integration-test workloads. ARTIFACTS: the harness logs each workload to a
# file there and deletes it when the workload passes.
.PHONY: upstream-perf-test
upstream-perf-test: envtest ## Upstream's own scheduler_perf suites (k8s.io/kubernetes' test cases, integration size) with our three plugins in every profile.
	mkdir -p $(CURDIR)/_output/scheduler_perf/upstream-logs
	PATH=$(BIN_DIR):$$PATH ARTIFACTS=$(CURDIR)/_output/scheduler_perf/upstream-logs $(GO) test -count=1 -timeout 60m ./test/integration/scheduler_perf/upstream \
		-run '^$$' -bench . -benchtime=1x -perf-scheduling-label-filter=integration-test,-performance

.PHONY: bench-upstream
bench-upstream: envtest ## Upstream's SchedulingBasic/5000Nodes_10000Pods under the default profile, ours and each plugin alone, alternated; benchstat (see doc/performance.md).
	PATH=$(BIN_DIR):$$PATH hack/bench-upstream.sh

.PHONY: bench
bench: envtest ## Micro-benchmarks and scheduler_perf workloads; figures under _output/bench (see doc/performance.md).
	PATH=$(BIN_DIR):$$PATH hack/bench.sh

.PHONY: playground
playground: ## Build bin/playground (KUBE_MINOR=1.36: bin/1.36/playground, which runs that minor's control plane from bin/1.36; bin/playground --kube-minor 1.36 runs it).
	$(GO) build $(MINOR_FLAGS) -o $(BIN_DIR)/playground ./cmd/playground

.PHONY: demo
# The builds report on stderr, so that stdout holds the playground's output
# alone: make demo ARGS="--output json" | jq works.
demo: ## Run the tutorial's scenario on an embedded control plane (ARGS="--output json" ...).
	@$(MAKE) --no-print-directory envtest playground >&2
	@$(BIN_DIR)/playground --assets $(BIN_DIR) $${ARGS:-}

.PHONY: fuzz
fuzz: ## Fuzz the count cache for FUZZTIME (default 60s).
	$(GO) test ./pkg/nodelesspods/podcount -run '^$$' -fuzz FuzzCache -fuzztime $${FUZZTIME:-60s}

.PHONY: verify
verify: verify-gofmt verify-vet verify-codegen verify-gomod verify-logcheck verify-filesize verify-imports verify-shellcheck ## All static checks (CI runs them before make test).

.PHONY: verify-gofmt
verify-gofmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

.PHONY: verify-vet
verify-vet:
	$(GO) vet ./...
ifneq ($(DESCHEDULER_MODULE),)
	cd descheduler && $(GO) vet ./...
endif

.PHONY: verify-codegen
verify-codegen:
	hack/verify-codegen.sh

.PHONY: verify-gomod
verify-gomod:
	hack/verify-gomod.sh

.PHONY: verify-logcheck
verify-logcheck: ## Structured, contextual logging only (logcheck from hack/tools).
	hack/verify-logcheck.sh

.PHONY: verify-filesize
verify-filesize: ## No Go file under internal/, cmd/, pkg/ or descheduler/ over 350 lines (tests aside).
	hack/verify-filesize.sh

.PHONY: verify-imports
verify-imports: ## The playground's step packages do not import each other (go list; hack/imports).
	$(GO) test -count=1 ./hack/imports/

.PHONY: verify-shellcheck
verify-shellcheck: ## shellcheck of hack/*.sh and .ci/run (installs shellcheck from Debian's packages if missing).
	hack/verify-shellcheck.sh

.PHONY: update-codegen
update-codegen: ## Regenerate deepcopy, conversion and defaulter code.
	hack/update-codegen.sh

.PHONY: clean
clean:
	rm -rf $(BIN_DIR)

.PHONY: help
help:
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "%-16s %s\n", $$1, $$2}'
