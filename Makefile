# Reloader: the two commands a newcomer needs are `make demo` and `make test`.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
GO ?= go
TEST_TIMEOUT ?= 60m
# Test packages that each start a control plane; two at once fits 2 cores.
TEST_PARALLEL ?= 2
FUZZTIME ?= 20s

# The concurrent parts: the controller's workers and alert queue (its e2e
# tests run a -race build of the binary), the mirror's parallel transfers.
# `make test` runs these packages under the race detector only, not twice.
RACE_PKGS ?= ./controller/... ./mirror/...

.PHONY: all build test race unit demo lint tools test-tools lint-tools bench fuzz release-local airgap-drill clean-tools

all: build

build:
	$(GO) build ./...

## tools: build the pinned etcd, kube-apiserver, kube-controller-manager,
## distribution registry, Trivy and the cosign and crane CLIs from the Go module
## proxy (cached outside git).
tools:
	@bash hack/tools/ensure.sh controlplane >/dev/null
	@bash hack/tools/ensure.sh registry >/dev/null
	@bash hack/tools/ensure.sh trivy >/dev/null
	@bash hack/tools/ensure.sh clients >/dev/null

# What only the tests run: built here, not inside a test's deadline, since
# the admission engines and cosign v3 take minutes to compile on a cold
# cache; `make demo` does not pay for them.
test-tools: tools
	@bash hack/tools/ensure.sh clients3 >/dev/null
	@bash hack/tools/ensure.sh policycontroller >/dev/null
	@bash hack/tools/ensure.sh kyverno >/dev/null

lint-tools:
	@bash hack/tools/ensure.sh lint >/dev/null

## test: every test, against the real control plane and registries.
test: test-tools
	$(GO) vet ./...
	$(GO) test -count=1 -p $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) $$($(GO) list ./... | grep -v -e '^github.com/reloader-dev/reloader/controller\(/\|$$\)' -e '^github.com/reloader-dev/reloader/mirror\(/\|$$\)')
	$(MAKE) --no-print-directory race

## race: the tests of RACE_PKGS with the race detector on.
race: test-tools
	$(GO) test -race -count=1 -p $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) $(RACE_PKGS)

## unit: only the tests that need no real component (fast feedback).
unit:
	$(GO) test -count=1 -short ./...

## demo: a local control plane with the controller reloading a Deployment.
demo: tools
	$(GO) run ./hack/demo

## lint: go vet, staticcheck, actionlint and helm lint --strict.
lint: lint-tools
	$(GO) vet ./...
	@bin=$$(bash hack/tools/ensure.sh lint); \
	  echo "staticcheck ./..."; "$$bin/staticcheck" ./...; \
	  if ls .github/workflows/*.y*ml >/dev/null 2>&1; then echo "actionlint"; "$$bin/actionlint" .github/workflows/*.y*ml; fi; \
	  for c in charts/*/; do [ -f "$$c/Chart.yaml" ] || continue; echo "helm lint --strict $$c"; "$$bin/helm" lint --strict "$$c"; done

## bench: Go benchmarks and the scenario drivers under bench/.
bench: tools
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./...

## fuzz: run every fuzz target for FUZZTIME each.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

## release-local: the whole release pipeline against a loopback registry with a
## generated key; prints the lock. TRIVY=/path/to/trivy runs the real gate; without it
## the release is built with --no-scan and its lock says it is unscanned.
release-local:
	$(GO) run ./cmd/release local --out _out/release $(if $(TRIVY),--trivy $(TRIVY),--no-scan)

## airgap-drill: only the air-gap drill (test/airgap), printing each step with its
## time: real release refused and accepted by real Trivy, export, import into two
## registries, values, Helm install, the mirrored controller reloading, tampering refused.
airgap-drill: tools
	$(GO) test -count=1 -v -timeout 20m -run '^TestAirGapDrill$$' ./test/airgap

clean-tools:
	rm -rf "$${RELOADER_TOOLS_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/reloader-dev/tools}"
