# Reloader: the two commands a newcomer needs are `make demo` and `make test`.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
GO ?= go
TEST_TIMEOUT ?= 60m
# Test packages that each start a control plane; two at once fits 2 cores.
TEST_PARALLEL ?= 2
# The plain phase runs a third package at once: beside the race phase two
# leave cores idle while they wait on apiservers, registries and engines,
# and once the race phase is done a third keeps both cores busy.
PLAIN_PARALLEL ?= 3
FUZZTIME ?= 20s
# go vet and the plain tests compile as the release builds and the tool sets
# do (static, -trimpath), and pass that on to the go builds the tests run, so
# the Go build cache shares those compiles: on an empty cache client-go and
# the libraries the tool sets also link compile once instead of two or three
# times. The race phase needs cgo, and its instrumented compiles share
# nothing anyway.
# GOFLAGS may be set in go's own env file, which the variable would hide.
PLAIN_ENV = CGO_ENABLED=0 GOFLAGS='$(strip $(filter-out -trimpath,$(shell $(GO) env GOFLAGS)) -trimpath)'

# The concurrent parts run under the race detector: the controller's
# workers, queues, rollout budget and alert queue (its e2e tests run a -race
# build of the binary), the mirror's registry client and archive, and in the
# mirror package the tests that drive its parallel transfers (RACE_MIRROR_TESTS).
# `make test` runs every test once: those with the race detector, all others
# without it, since instrumenting a release build or an admission engine's
# fixtures finds no race of ours and costs minutes.
RACE_PKGS ?= ./controller/... ./mirror/registry ./mirror/archive
RACE_MIRROR_TESTS ?= ^(TestCopyRetriesServerErrorsAndResets|TestInterruptedCopyFailsClearlyAndReRunSendsOnlyWhatIsMissing|TestCopyToRegistryWithReferrersAPIPreservesEveryDigest|TestCopyToDistributionWritesTagFallbackKeepingArtifactType|TestCopyWritesBlobsThenManifestsThenTags|TestExportImportRoundTripPreservesEveryDigest|TestExportStoresSharedBlobsOnce|TestImportRejectsABadArchiveBeforePushingAnything)$$
# Packages outside RACE_PKGS, as go list names them, the longest first so
# that none starts last and runs alone (go test keeps the order it is given).
SLOW_PKGS ?= ./test/airgap ./cmd/mirror ./cmd/release ./mirror/admission ./release/local
PLAIN_PKGS = $$($(GO) list $(SLOW_PKGS) ./... | grep -v -e '^github.com/reloader-dev/reloader/controller\(/\|$$\)' -e '^github.com/reloader-dev/reloader/mirror/\(registry\|archive\)$$')

.PHONY: all build test test-plain race race-pkgs race-mirror unit demo lint tools test-tools lint-tools bench fuzz release-local reloader-release-pkcs11 airgap-drill clean-tools

all: build

build:
	$(GO) build ./...

## tools: build the pinned etcd, kube-apiserver, kube-controller-manager,
## distribution registry, Trivy and the cosign and crane CLIs from the Go module
## proxy (cached outside git).
# Three sets build side by side, the longest cold build first: a set's module
# downloads and final links leave a core idle that another set's compile uses.
TOOL_SETS = trivy controlplane clients registry
# What only the tests run: built here, not inside a test's deadline, since
# the admission engines and cosign v3 take minutes to compile on a cold
# cache; `make demo` does not pay for them.
TEST_TOOL_SETS = kyverno policycontroller
TOOL_BUILDS ?= 3
tools:
	@printf '%s\n' $(TOOL_SETS) | xargs -P $(TOOL_BUILDS) -I{} bash hack/tools/ensure.sh {} >/dev/null

test-tools:
	@printf '%s\n' $(TEST_TOOL_SETS) $(TOOL_SETS) | xargs -P $(TOOL_BUILDS) -I{} bash hack/tools/ensure.sh {} >/dev/null

lint-tools:
	@bash hack/tools/ensure.sh lint >/dev/null

## test: every test, against the real control plane and registries.
# The plain and the race tests run side by side: most tests wait on an
# apiserver, a registry or an engine, and one phase alone leaves a core idle.
test: test-tools
	$(PLAIN_ENV) $(GO) vet ./...
	@$(MAKE) --no-print-directory -j3 test-plain race-pkgs race-mirror

test-plain: test-tools
	$(PLAIN_ENV) $(GO) test -count=1 -p $(PLAIN_PARALLEL) -timeout $(TEST_TIMEOUT) -skip '$(RACE_MIRROR_TESTS)' $(PLAIN_PKGS)

## race: the tests of RACE_PKGS and RACE_MIRROR_TESTS with the race detector on.
race: race-pkgs race-mirror

race-pkgs: test-tools
	$(GO) test -race -count=1 -p $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) $(RACE_PKGS)

race-mirror: test-tools
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) -run '$(RACE_MIRROR_TESTS)' ./mirror

## unit: only the tests that need no real component (fast feedback).
unit:
	$(GO) test -count=1 -short ./...

## demo: a local control plane with the controller reloading a Deployment.
demo: tools
	$(GO) run ./hack/demo

## lint: go vet, staticcheck, actionlint and helm lint --strict.
lint: lint-tools
	$(PLAIN_ENV) $(GO) vet ./...
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

## reloader-release-pkcs11: reloader-release that signs with a key in a PKCS#11 token
## (--key pkcs11:...): built with cgo and -tags pkcs11key, as cosign's own PKCS#11
## build; it dlopens the token's module. The default build is static and refuses
## pkcs11: keys, saying how to build this one.
reloader-release-pkcs11:
	CGO_ENABLED=1 $(GO) build -trimpath -tags pkcs11key -o _out/bin/reloader-release-pkcs11 ./cmd/release

## airgap-drill: only the air-gap drill (test/airgap), printing each step with its
## time: real release refused and accepted by real Trivy, export, import into two
## registries, values, Helm install, the mirrored controller reloading, tampering refused.
airgap-drill: tools
	$(GO) test -count=1 -v -timeout 20m -run '^TestAirGapDrill$$' ./test/airgap

clean-tools:
	rm -rf "$${RELOADER_TOOLS_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/reloader-dev/tools}"
