# payout-operator: stablecoin-to-fiat payouts as a Kubernetes operator with a REST facade.
#
# `make run` and `make test` are the whole set-up on a fresh machine: every tool they use is
# built or installed here, from the Go module proxy or the npm registry, and cached by version
# in a per-user directory outside the checkout, reached through bin/.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GOOS   := $(shell go env GOOS)
GOARCH := $(shell go env GOARCH)
PLATFORM := $(GOOS)-$(GOARCH)

## Tool versions
K8S_VERSION            ?= v1.37.2
ETCD_VERSION           ?= v3.7.3
CONTROLLER_GEN_VERSION ?= v0.23.0
ABIGEN_VERSION         ?= v1.17.10
# kustomize as kubectl v1.37 embeds it, built from the module proxy (deploy renders with it)
KUSTOMIZE_VERSION      ?= v5.8.1
# npm packages (hack/npm-tool.sh): the dev chains' node, the token's compiler and its library
ANVIL_VERSION          ?= 1.7.1
SOLC_VERSION           ?= 0.8.37
OPENZEPPELIN_VERSION   ?= 4.9.6
# the OpenAPI linter (lint-openapi)
SPECTRAL_VERSION       ?= 6.16.3
# the README walk-through's tools: foundry's cast (npm, as anvil) and gojq as jq (module proxy;
# v0.12.20 needs a go-yaml pseudo-version the proxy does not serve)
CAST_VERSION           ?= 1.7.1
# the MCP walk-through's client (hack/mcp-walkthrough.sh): the MCP Inspector's CLI, from npm
INSPECTOR_VERSION      ?= 2.12.0
# the browser tests' accessibility checker (test/browser: axe.min.js injected into each page)
AXE_CORE_VERSION       ?= 4.14.1
GOJQ_VERSION           ?= v0.12.19
# the Ginkgo CLI (test-payoutd's parallel processes), at the version of the library go.mod
# requires: the CLI and the suites' library must match
GINKGO_VERSION         := $(shell go list -m -f '{{.Version}}' github.com/onsi/ginkgo/v2)

## Locations
CACHE_HOME ?= $(if $(XDG_CACHE_HOME),$(XDG_CACHE_HOME),$(HOME)/.cache)
TOOLS_CACHE ?= $(CACHE_HOME)/payout-operator
LOCALBIN ?= $(CURDIR)/bin
# envtest wants kube-apiserver, etcd and kubectl in one directory: bin/k8s holds links to the
# cached builds of each.
ENVTEST_ASSETS := $(LOCALBIN)/k8s
KUBERNETES_CACHE := $(TOOLS_CACHE)/kubernetes/$(K8S_VERSION)-$(PLATFORM)
ETCD_CACHE := $(TOOLS_CACHE)/etcd/$(ETCD_VERSION)-$(PLATFORM)
CONTROLLER_GEN := $(LOCALBIN)/controller-gen
ABIGEN := $(LOCALBIN)/abigen
# anvil ships as one npm package per platform (@foundry-rs/anvil-linux-amd64, -darwin-arm64, ...).
ANVIL_PACKAGE := @foundry-rs/anvil-$(PLATFORM)
ANVIL_CACHE := $(TOOLS_CACHE)/npm/$(ANVIL_PACKAGE)-$(ANVIL_VERSION)/node_modules/$(ANVIL_PACKAGE)/bin/anvil
ANVIL := $(LOCALBIN)/anvil
CAST_PACKAGE := @foundry-rs/cast-$(PLATFORM)
CAST_CACHE := $(TOOLS_CACHE)/npm/$(CAST_PACKAGE)-$(CAST_VERSION)/node_modules/$(CAST_PACKAGE)/bin/cast
CAST := $(LOCALBIN)/cast
JQ := $(LOCALBIN)/jq
INSPECTOR_PACKAGE := @modelcontextprotocol/inspector
INSPECTOR_CACHE := $(TOOLS_CACHE)/npm/$(INSPECTOR_PACKAGE)-$(INSPECTOR_VERSION)/node_modules/.bin/mcp-inspector
INSPECTOR := $(LOCALBIN)/mcp-inspector
TOKEN_DIR := internal/chain/token
KUSTOMIZE := $(LOCALBIN)/kustomize
GINKGO := $(LOCALBIN)/ginkgo
SPECTRAL_PACKAGE := @stoplight/spectral-cli
SPECTRAL_CACHE := $(TOOLS_CACHE)/npm/$(SPECTRAL_PACKAGE)-$(SPECTRAL_VERSION)/node_modules/.bin/spectral
SPECTRAL := $(LOCALBIN)/spectral
AXE_CORE_CACHE := $(TOOLS_CACHE)/npm/axe-core-$(AXE_CORE_VERSION)/node_modules/axe-core/axe.min.js
AXE_CORE := $(LOCALBIN)/axe.min.js

# The image deploy renders into the manifests, and the tool that builds it (none runs here).
IMG ?= payoutd:latest
CONTAINER_TOOL ?= docker
# Where deploy writes install.yaml.
DIST ?= $(CURDIR)/dist

DEV_DIR ?= $(CURDIR)/.dev
E2E_DIR ?= $(CURDIR)/.dev-e2e
CONFORMANCE_DIR ?= $(CURDIR)/../shared/conformance
# Minutes `make test` waits for the e2e instance (a cold machine first builds the control plane).
E2E_READY_MINUTES ?= 30
# Each fuzz target's budget, in executions: a duration (-fuzztime 10s) races Go's fuzzing
# coordinator at its deadline and fails a target with a bare "context deadline exceeded" and no
# input (golang/go#75804, unfixed in go1.26; seen in this CI on FuzzDecide). 10,000 executions take
# 1-16 s per target here.
FUZZTIME ?= 10000x
# One fuzzing worker: the target counts executions, and under make test the stage runs beside
# specs that wait on the CPU.
FUZZ_WORKERS ?= 1

export KUBEBUILDER_ASSETS := $(ENVTEST_ASSETS)
# The dev chains' node, for payout-dev and for the Go tests (internal/dev/devchain).
export PAYOUT_ANVIL := $(ANVIL)
export TOOLS_CACHE
# The renderer of config/ for config/deploy_test.go (else it uses bin/k8s/kubectl kustomize).
export KUSTOMIZE

# Packages whose markers make the CRDs, and each role of config/rbac: the controllers (with the
# chain watcher and payoutd's leader election), the REST facade, and the operators' plugin.
CRD_PATHS := paths="./api/..."
CONTROLLER_RBAC_PATHS := paths="./controllers/..." paths="./internal/chain/..." paths="./internal/recovery/..." paths="./cmd/payoutd/..."
FACADE_RBAC_PATHS := paths="./apiserver/..." paths="./internal/kycsite/..."
OPERATOR_RBAC_PATHS := paths="./cmd/kubectl-payout/..."
SWEEPER_RBAC_PATHS := paths="./internal/sweeper/..."
# $(call rbac-gen,DIR) writes the four roles to DIR/{controller,facade,operator,sweeper}/role.yaml.
rbac-gen = $(CONTROLLER_GEN) rbac:roleName=controller-role $(CONTROLLER_RBAC_PATHS) output:rbac:artifacts:config=$(1)/controller && \
	$(CONTROLLER_GEN) rbac:roleName=facade-role $(FACADE_RBAC_PATHS) output:rbac:artifacts:config=$(1)/facade && \
	$(CONTROLLER_GEN) rbac:roleName=operator-role $(OPERATOR_RBAC_PATHS) output:rbac:artifacts:config=$(1)/operator && \
	$(CONTROLLER_GEN) rbac:roleName=sweeper-role $(SWEEPER_RBAC_PATHS) output:rbac:artifacts:config=$(1)/sweeper
##@ General

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate the CRDs and the four RBAC roles (controllers, facade, operators, sweeper) from the markers.
	$(CONTROLLER_GEN) crd $(CRD_PATHS) output:crd:artifacts:config=config/crd/bases
	$(call rbac-gen,config/rbac)

.PHONY: generate
generate: controller-gen ## Generate the deepcopy code from the markers.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: fmt
fmt: ## gofmt the tree.
	gofmt -l -w $$(git ls-files '*.go' | grep -v -e '^vendor/' -e '^third_party/') 

.PHONY: check-fmt
check-fmt: ## Fail when a Go file is not gofmt-formatted (make fmt formats them).
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v -e '^vendor/' -e '^third_party/')); \
	if [ -n "$$out" ]; then echo "not gofmt-formatted (run make fmt):"; echo "$$out"; exit 1; fi

.PHONY: vet
vet: ## go vet.
	go vet ./...

# The dev chains' token: StableToken.sol compiled to the committed ABI and bytecode, and the Go
# bindings generated from them.
.PHONY: token
token: ## Compile StableToken.sol into $(TOKEN_DIR)/StableToken.{abi,bin} (solc-js, offline once cached).
	hack/compile-token.sh $(SOLC_VERSION) $(OPENZEPPELIN_VERSION) $(TOKEN_DIR)

# The sweep delegate (internal/chain/evm/sweep): SweepDelegate.sol compiled to the committed ABI
# and creation bytecode the package embeds; its test compiles it again and fails on a difference.
SWEEP_DIR := internal/chain/evm/sweep
.PHONY: solc
solc: ## Cache solc-js and OpenZeppelin (npm, by version): the sweep package's test compiles its delegate with them.
	@hack/npm-tool.sh solc $(SOLC_VERSION) >/dev/null && hack/npm-tool.sh @openzeppelin/contracts $(OPENZEPPELIN_VERSION) >/dev/null

.PHONY: sweep-delegate
sweep-delegate: ## Compile SweepDelegate.sol into $(SWEEP_DIR)/SweepDelegate.{abi,bin} (solc-js, offline once cached).
	hack/compile-token.sh $(SOLC_VERSION) $(OPENZEPPELIN_VERSION) $(SWEEP_DIR) $(SWEEP_DIR)/SweepDelegate.sol SweepDelegate

.PHONY: bindings
bindings: abigen ## Generate the token's typed Go bindings (abigen --v2) from the committed ABI and bytecode.
	$(ABIGEN) --v2 --abi $(TOKEN_DIR)/StableToken.abi --bin $(TOKEN_DIR)/StableToken.bin \
	  --pkg token --type StableToken --out $(TOKEN_DIR)/stabletoken.go

##@ Build

.PHONY: build
build: ## Build payoutd, kubectl-payout and payout-dev into bin/.
	go build -o $(LOCALBIN)/ ./cmd/payoutd ./cmd/kubectl-payout ./cmd/payout-dev

.PHONY: run
run: manifests build control-plane anvil cast jq ## Run the whole service locally (see CONTRACT.md); writes .dev/env when ready.
	$(LOCALBIN)/payout-dev --dir $(DEV_DIR) --assets $(ENVTEST_ASSETS) --crds config/crd/bases --policies config/policy --bin $(LOCALBIN) --anvil $(ANVIL)

.PHONY: docker-build
docker-build: ## Build the payoutd image IMG with CONTAINER_TOOL (docker, podman; see Dockerfile).
	$(CONTAINER_TOOL) build -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the payoutd image IMG.
	$(CONTAINER_TOOL) push $(IMG)

##@ Deployment

.PHONY: deploy
deploy: manifests kustomize ## Render config/default with IMG into $(DIST)/install.yaml (apply it with kubectl apply --server-side -f).
	@rm -rf $(DIST)/overlay && mkdir -p $(DIST)/overlay
	printf 'resources:\n- %s\n' "$$(realpath --relative-to=$(DIST)/overlay config/default)" > $(DIST)/overlay/kustomization.yaml
	cd $(DIST)/overlay && $(KUSTOMIZE) edit set image payoutd=$(IMG)
	$(KUSTOMIZE) build $(DIST)/overlay > $(DIST)/install.yaml
	@echo "wrote $(DIST)/install.yaml (image $(IMG)); install: kubectl apply --server-side -f $(DIST)/install.yaml"

rollback-manifests: kustomize ## Render the previous release's config/default (hack/previous-release) with IMG into $(DIST)/rollback.yaml, without its CRDs: this release's stay (docs/operations/upgrade.md).
	@rm -rf $(DIST)/previous && mkdir -p $(DIST)/previous/overlay
	git archive "$$(grep -v '^#' hack/previous-release | head -n 1)" config | tar -x -C $(DIST)/previous
	printf 'resources:\n- ../config/default\n' > $(DIST)/previous/overlay/kustomization.yaml
	cd $(DIST)/previous/overlay && $(KUSTOMIZE) edit set image payoutd=$(IMG)
	$(KUSTOMIZE) build $(DIST)/previous/overlay | awk 'BEGIN { RS = "\n---\n"; ORS = "\n---\n" } !/(^|\n)kind: CustomResourceDefinition\n/' > $(DIST)/rollback.yaml
	@echo "wrote $(DIST)/rollback.yaml (image $(IMG), the CRDs left out); roll back: kubectl apply --server-side -f $(DIST)/rollback.yaml"

##@ Test

# The stages of `make test` after the checks run side by side, each one's output kept apart and
# printed when it ends (--output-sync): most of their wall time is specs waiting on blocks, polls
# and processes, not the CPU. One after another they took 19 minutes on 2 cores; all six at
# once 14, but at a load average above 25, where a watcher's heartbeat can age past its limit
# and a spec's deposit option turns unavailable. TEST_JOBS stages run at once, longest first;
# a failed stage does not stop the others (--keep-going), so one run shows every failure.
TEST_STAGES := test-payoutd test-conformance test-envtest-suites test-browser test-integration test-fuzz
TEST_JOBS ?= 4

.PHONY: test
test: check-generated check-third-party check-fmt vet lint-openapi ## Everything CI runs.
	$(MAKE) --no-print-directory --keep-going -j$(TEST_JOBS) --output-sync=target TEST_T0=$$(date +%s) $(TEST_STAGES)

# The last line of a stage under `make test`: when it ended, counted from the stages' start.
stage-done = $(if $(TEST_T0),@echo "$@: passed $$(( $$(date +%s) - $(TEST_T0) )) s after make test's stages began")

.PHONY: check-generated
check-generated: controller-gen ## Fail when the committed generated files differ from what the markers generate.
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..." output:object:dir=$$tmp/object; \
	$(CONTROLLER_GEN) crd $(CRD_PATHS) output:crd:dir=$$tmp/crd; \
	$(call rbac-gen,$$tmp/rbac); \
	diff -u api/v1alpha1/zz_generated.deepcopy.go $$tmp/object/zz_generated.deepcopy.go && \
	diff -ru config/crd/bases $$tmp/crd && \
	diff -u config/rbac/controller/role.yaml $$tmp/rbac/controller/role.yaml && \
	diff -u config/rbac/facade/role.yaml $$tmp/rbac/facade/role.yaml && \
	diff -u config/rbac/operator/role.yaml $$tmp/rbac/operator/role.yaml && \
	diff -u config/rbac/sweeper/role.yaml $$tmp/rbac/sweeper/role.yaml \
	  || { echo "generated files are stale: run 'make generate manifests'"; exit 1; }

.PHONY: check-third-party
check-third-party: ## Fail unless each copy in third_party/ is its module's release with the patch beside it applied.
	hack/check-third-party.sh

.PHONY: check-token
check-token: ## Fail when the committed token ABI/bytecode differ from a fresh compile of StableToken.sol.
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	hack/compile-token.sh $(SOLC_VERSION) $(OPENZEPPELIN_VERSION) $$tmp && \
	diff -u $(TOKEN_DIR)/StableToken.abi $$tmp/StableToken.abi && diff $(TOKEN_DIR)/StableToken.bin $$tmp/StableToken.bin \
	  || { echo "the token's ABI/bytecode are stale: run 'make token bindings'"; exit 1; }

# Domain packages (and test/testenv's own test) whose tests need the control plane run with the
# envtest suites.
ENVTEST_INTERNAL := ./internal/chain/watch/... ./internal/dashboard/... ./internal/kycsite/... ./internal/ledger/gather/... ./internal/sweeper/... ./test/testenv/...
# test-integration's packages: the others of internal/ and test/ (ENVTEST_INTERNAL run on envtest).
ENVTEST_INTERNAL_RE := /internal/(chain/watch|dashboard|kycsite|ledger/gather|sweeper)(/|$$)|/test/(browser|testenv)$$
# test-unit's packages: every package with pure tests. Under -short a test that needs a server
# (anvil, redis-server, PostgreSQL, the control plane) skips, in the helper that starts it
# (internal/dev/devchain, test/testredis, test/pgtest) or in its suite; test-integration and
# test-envtest run them all.
UNIT_PACKAGES := ./internal/... ./test/... ./api/... ./cmd/kubectl-payout/internal/...

.PHONY: lint-openapi
lint-openapi: spectral ## Lint apiserver/openapi.yaml with Spectral (spectral:oas); any error or warning fails.
	$(SPECTRAL) lint --ruleset .spectral.yaml --fail-severity=warn apiserver/openapi.yaml

.PHONY: test-unit
# go vet is a stage of its own (make vet), and most of the wall time is linking 39 test binaries:
# without vet and without DWARF (-ldflags=-w) the target takes 56 s instead of 70 s on 2 cores.
test-unit: ## Unit tests: no server, no tool to install (go test -short; seconds once built).
	go test -short -count=1 -vet=off -ldflags=-w $(UNIT_PACKAGES)

.PHONY: test-integration
test-integration: anvil redis-server postgres solc ## The domain packages' tests in full, on anvil, Redis and PostgreSQL (no cluster).
	go test -count=1 $$(go list ./internal/... ./test/... | grep -v -E '$(ENVTEST_INTERNAL_RE)')
	$(stage-done)

.PHONY: test-envtest
test-envtest: test-envtest-suites test-payoutd ## Suites on a real kube-apiserver and etcd (envtest), the deployment's among them.

.PHONY: test-envtest-suites
test-envtest-suites: control-plane build anvil kustomize redis-server postgres ## test-envtest's suites but payoutd's.
	go test -count=1 -timeout 30m $$(go list ./api/... ./controllers/... ./apiserver/... ./cmd/... ./config/... $(ENVTEST_INTERNAL) | grep -v '/cmd/payoutd$$')
	$(stage-done)

# payoutd's suite is the longest of test-envtest (691 s of 19 minutes in one process): its
# specs run in PAYOUTD_PROCS Ginkgo processes, each with a control plane, dev chain, bank and mail
# sink of its own (the suite's BeforeSuite runs in each process).
PAYOUTD_PROCS ?= 3
.PHONY: test-payoutd
# The upgrade specs' previous payoutd is built (once per user) before the suite's clock runs; a
# clone without its commit fails there, saying so.
test-payoutd: control-plane anvil redis-server ginkgo ## payoutd's end-to-end suite, in PAYOUTD_PROCS parallel Ginkgo processes.
	hack/previous-payoutd.sh >/dev/null
	$(GINKGO) run --procs=$(PAYOUTD_PROCS) --timeout=30m --no-color ./cmd/payoutd
	$(stage-done)

.PHONY: test-browser
test-browser: control-plane anvil chromium axe-core ## The dashboard's and the wallet site's pages in a real Chromium (chromedp), axe-core on each; a transfer on a whole payoutd with anvil.
	go test -count=1 -timeout 15m ./test/browser/...
	$(stage-done)

.PHONY: test-fuzz
test-fuzz: ## Run every fuzz target for $(FUZZTIME) (executions) on top of its seed corpus.
	@# the targets are found in the sources: listing them with go test -list would build the
	@# tests of every package (three minutes on CI)
	@set -e; for file in $$(git grep -l '^func Fuzz[A-Z]' -- '*_test.go' ':!third_party'); do \
	  pkg=./$$(dirname $$file); \
	  for f in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$file); do \
	    echo "fuzz $$pkg $$f"; go test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -parallel $(FUZZ_WORKERS) $$pkg; \
	  done; \
	done
	$(stage-done)

.PHONY: test-conformance
test-conformance: build control-plane anvil cast jq mcp-inspector ## The listed conformance cases, then the README walk-through, against one fresh `make run`.
	hack/conformance.sh "$(CONFORMANCE_DIR)" test/conformance.pass "$(E2E_DIR)" $(E2E_READY_MINUTES)
	$(stage-done)

.PHONY: walkthrough
walkthrough: cast jq ## Run the README walk-through against the running `make run` (DEV_DIR, default .dev).
	hack/walkthrough.sh "$(DEV_DIR)"

.PHONY: mcp-walkthrough
mcp-walkthrough: cast jq mcp-inspector ## Run the README's MCP walk-through ("Agents") against the running `make run`.
	WALKTHROUGH=mcp-walkthrough hack/walkthrough.sh "$(DEV_DIR)"

.PHONY: docs
docs: ## Rewrite the generated parts of docs/ (payoutd's flags, the plugin's commands, the lifecycle diagram) from the code.
	PAYOUT_UPDATE_DOCS=1 go test -count=1 -run '^(TestConfigurationDoc|TestKubectlPayoutDoc|TestArchitectureLifecycle)$$' ./cmd/payoutd ./cmd/kubectl-payout ./test/docgen

##@ Measurements

.PHONY: loadrun
loadrun: control-plane ## The facade under load against its baselines (docs/benchmarks.md).
	go run ./hack/loadrun $(LOADRUN_ARGS)

# The process mode: payoutd started as `make run` starts it (a DEV_DIR of its own, its pprof
# endpoint on), the bare handler a process of its own; -env drives a running instance instead.
LOADRUN_PROCESS_ARGS ?= -workers 32 -transfers 2000
.PHONY: loadrun-process
loadrun-process: manifests build control-plane anvil ## Cached reads of a payoutd process against a bare handler's process (docs/benchmarks.md).
	go run ./hack/loadrun -phases process $(LOADRUN_PROCESS_ARGS)

MCP_ARGS ?=
.PHONY: loadrun-mcp
loadrun-mcp: control-plane ## get_transfer tool calls of the MCP tool server against REST GET transfer, 10 000 stored (docs/benchmarks.md).
	go run ./hack/loadrun -phases mcp $(MCP_ARGS)

QUOTAS_ARGS ?=
.PHONY: loadrun-quotas
loadrun-quotas: control-plane ## The facade's and controllers' heap with 10 accounts at their default caps (docs/benchmarks.md).
	go run ./hack/loadrun -phases quotas $(QUOTAS_ARGS)

# 100 000 finished transfers at 150/s are about 12 minutes, plus a retention and a compaction.
RETENTION_ARGS ?= -finished 100000 -finish-rate 150 -retention 1m -sample 30s -archived-lookups 10000 -workers 4
.PHONY: bench-retention
bench-retention: control-plane postgres ## etcd under retention: finished transfers archived, etcd's size, archived lookups (docs/benchmarks.md).
	go run ./hack/loadrun -phases retention $(RETENTION_ARGS)

##@ Tools

.PHONY: control-plane
control-plane: $(ENVTEST_ASSETS)/kube-apiserver $(ENVTEST_ASSETS)/kubectl $(ENVTEST_ASSETS)/etcd ## Build (once per version) the local control plane.

$(KUBERNETES_CACHE)/kube-apiserver $(KUBERNETES_CACHE)/kubectl:
	hack/build-control-plane.sh kubernetes $(K8S_VERSION) $(KUBERNETES_CACHE)

$(ETCD_CACHE)/etcd:
	hack/build-control-plane.sh etcd $(ETCD_VERSION) $(ETCD_CACHE)

$(ENVTEST_ASSETS)/kube-apiserver $(ENVTEST_ASSETS)/kubectl: $(ENVTEST_ASSETS)/%: $(KUBERNETES_CACHE)/kube-apiserver
	@mkdir -p $(ENVTEST_ASSETS)
	ln -sfn $(KUBERNETES_CACHE)/$* $@

$(ENVTEST_ASSETS)/etcd: $(ETCD_CACHE)/etcd
	@mkdir -p $(ENVTEST_ASSETS)
	ln -sfn $(ETCD_CACHE)/etcd $@

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Install controller-gen (cached by version).
$(CONTROLLER_GEN): $(TOOLS_CACHE)/tools/controller-gen-$(CONTROLLER_GEN_VERSION)
	@mkdir -p $(LOCALBIN)
	ln -sfn $< $@
$(TOOLS_CACHE)/tools/controller-gen-$(CONTROLLER_GEN_VERSION):
	@mkdir -p $(TOOLS_CACHE)/tools/tmp
	GOBIN=$(TOOLS_CACHE)/tools/tmp go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(TOOLS_CACHE)/tools/tmp/controller-gen $@

.PHONY: abigen
abigen: $(ABIGEN) ## Install go-ethereum's abigen (cached by version).
$(ABIGEN): $(TOOLS_CACHE)/tools/abigen-$(ABIGEN_VERSION)
	@mkdir -p $(LOCALBIN)
	ln -sfn $< $@
$(TOOLS_CACHE)/tools/abigen-$(ABIGEN_VERSION):
	@mkdir -p $(TOOLS_CACHE)/tools
	tmp=$$(mktemp -d $(TOOLS_CACHE)/tools/.tmp-abigen.XXXXXX); trap 'rm -rf "$$tmp"' EXIT; \
	GOBIN=$$tmp go install github.com/ethereum/go-ethereum/cmd/abigen@$(ABIGEN_VERSION); \
	mv $$tmp/abigen $@

.PHONY: anvil
anvil: $(ANVIL) ## Install anvil, the dev chains' node, from npm (cached by version).
$(ANVIL): $(ANVIL_CACHE)
	@mkdir -p $(LOCALBIN)
	ln -sfn $< $@
$(ANVIL_CACHE):
	hack/npm-tool.sh $(ANVIL_PACKAGE) $(ANVIL_VERSION) >/dev/null

# Debian's redis-server, for the tests of the limits shared across facade replicas
# (test/testredis starts a private instance per suite). Installed with apt-get when missing
# and root (CI); otherwise the script says what to run.
.PHONY: redis-server
redis-server: ## Install Debian's redis-server when missing (apt-get, as root; its service is not started).
	hack/redis-server.sh >/dev/null

.PHONY: chromium
chromium: ## Install Debian's chromium when missing (apt-get, as root), for the browser tests.
	@command -v $${PAYOUT_CHROMIUM:-/usr/bin/chromium} >/dev/null || hack/apt-install.sh chromium "The browser tests (make test-browser) drive a real Chromium"

.PHONY: axe-core
axe-core: $(AXE_CORE) ## Install axe-core (the browser tests' accessibility rules) from npm (cached by version).
$(AXE_CORE): $(AXE_CORE_CACHE)
	@mkdir -p $(LOCALBIN)
	ln -sfn $< $@
$(AXE_CORE_CACHE):
	hack/npm-tool.sh axe-core $(AXE_CORE_VERSION) >/dev/null

.PHONY: cast
cast: $(CAST) ## Install foundry's cast (the walk-through's deposit) from npm (cached by version).
$(CAST): $(CAST_CACHE)
	@mkdir -p $(LOCALBIN)
	ln -sfn $< $@
$(CAST_CACHE):
	hack/npm-tool.sh $(CAST_PACKAGE) $(CAST_VERSION) >/dev/null

.PHONY: mcp-inspector
mcp-inspector: $(INSPECTOR) ## Install the MCP Inspector (its CLI drives the MCP walk-through) from npm (cached by version).
$(INSPECTOR): $(INSPECTOR_CACHE)
	@mkdir -p $(LOCALBIN)
	ln -sfn $< $@
$(INSPECTOR_CACHE):
	hack/npm-tool.sh $(INSPECTOR_PACKAGE) $(INSPECTOR_VERSION) >/dev/null

.PHONY: jq
jq: $(JQ) ## Install gojq as bin/jq from the module proxy (cached by version).
$(JQ): $(TOOLS_CACHE)/tools/gojq-$(GOJQ_VERSION)
	@mkdir -p $(LOCALBIN)
	ln -sfn $< $@
$(TOOLS_CACHE)/tools/gojq-$(GOJQ_VERSION):
	@mkdir -p $(TOOLS_CACHE)/tools
	tmp=$$(mktemp -d $(TOOLS_CACHE)/tools/.tmp-gojq.XXXXXX); trap 'rm -rf "$$tmp"' EXIT; \
	GOBIN=$$tmp go install github.com/itchyny/gojq/cmd/gojq@$(GOJQ_VERSION); \
	mv $$tmp/gojq $@

.PHONY: ginkgo
ginkgo: $(GINKGO) ## Build the Ginkgo CLI at go.mod's version of the library (cached by version).
$(GINKGO): $(TOOLS_CACHE)/tools/ginkgo-$(GINKGO_VERSION)
	@mkdir -p $(LOCALBIN)
	ln -sfn $< $@
$(TOOLS_CACHE)/tools/ginkgo-$(GINKGO_VERSION):
	@mkdir -p $(TOOLS_CACHE)/tools
	tmp=$$(mktemp -d $(TOOLS_CACHE)/tools/.tmp-ginkgo.XXXXXX); trap 'rm -rf "$$tmp"' EXIT; \
	go build -o $$tmp/ginkgo github.com/onsi/ginkgo/v2/ginkgo; \
	mv $$tmp/ginkgo $@

.PHONY: kustomize
kustomize: $(KUSTOMIZE) ## Install kustomize from the module proxy (cached by version).
$(KUSTOMIZE): $(TOOLS_CACHE)/tools/kustomize-$(KUSTOMIZE_VERSION)
	@mkdir -p $(LOCALBIN)
	ln -sfn $< $@
$(TOOLS_CACHE)/tools/kustomize-$(KUSTOMIZE_VERSION):
	@mkdir -p $(TOOLS_CACHE)/tools
	tmp=$$(mktemp -d $(TOOLS_CACHE)/tools/.tmp-kustomize.XXXXXX); trap 'rm -rf "$$tmp"' EXIT; \
	GOBIN=$$tmp go install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION); \
	mv $$tmp/kustomize $@

.PHONY: postgres
postgres: ## Make sure PostgreSQL's server binaries are installed (the archive's tests start their own server; as root: apt-get).
	@hack/postgres.sh >/dev/null

.PHONY: spectral
spectral: $(SPECTRAL) ## Install the Spectral OpenAPI linter from npm (cached by version).
$(SPECTRAL): $(SPECTRAL_CACHE)
	@mkdir -p $(LOCALBIN)
	ln -sfn $< $@
$(SPECTRAL_CACHE):
	hack/npm-tool.sh $(SPECTRAL_PACKAGE) $(SPECTRAL_VERSION) >/dev/null
