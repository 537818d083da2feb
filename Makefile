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
# Steps that only compile let the compiler collect garbage less often
# (5% less CPU measured on a cold compile; as hack/tools/ensure.sh does). Not
# for go test: its test binaries and the processes they start would inherit it.
COMPILE_ENV = GOGC=400
# STATIC_FLAGS are publish/build.Flags(), the flags of every release build,
# and of hack/tools/ensure.sh's builds (test/buildflags_test.go holds all three
# equal): one build configuration for everything static. Its tags let the
# PKCS#11 test's cgo build of reloader-release compile only the packages
# with cgo files anew (about 2,100 compiles fewer on an empty cache), and
# -dwarf=false takes 15% off every compile (a release strips DWARF anyway).
STATIC_FLAGS = -trimpath -buildvcs=false -tags=netgo,osusergo -gcflags=all=-dwarf=false
STATIC_TAGS = $(patsubst -tags=%,%,$(filter -tags=%,$(STATIC_FLAGS)))
PLAIN_ENV = CGO_ENABLED=0 GOFLAGS='$(strip $(filter-out $(STATIC_FLAGS),$(shell $(GO) env GOFLAGS)) $(STATIC_FLAGS))'
# The race phase needs cgo and shares no compile with the others, but
# writes no DWARF either (its -race builds of the controller inherit it).
RACE_ENV = GOFLAGS='$(strip $(filter-out -gcflags=all=-dwarf=false,$(shell $(GO) env GOFLAGS)) -gcflags=all=-dwarf=false)'

# The concurrent parts run under the race detector: the controller's
# workers, queues, rollout budget and alert queue (its e2e tests run a -race
# build of the binary), the mirror's registry client and archive, and in the
# mirror package the tests that drive its parallel transfers (RACE_MIRROR_TESTS).
# `make test` runs every test once: those with the race detector, all others
# without it, since instrumenting a release build or an admission engine's
# fixtures finds no race of ours and costs minutes.
RACE_PKGS ?= ./controller/... ./mirror/registry ./mirror/archive
RACE_MIRROR_TESTS ?= ^(TestCopyRetriesServerErrorsAndResets|TestInterruptedCopyFailsClearlyAndReRunSendsOnlyWhatIsMissing|TestCopyToRegistryWithReferrersAPIPreservesEveryDigest|TestCopyToDistributionWritesTagFallbackKeepingArtifactType|TestCopyWritesBlobsThenManifestsThenTags|TestExportImportRoundTripPreservesEveryDigest|TestExportStoresSharedBlobsOnce|TestImportRejectsABadArchiveBeforePushingAnything|TestTheTargetIsAskedWhatItHoldsWhileTheSourceIsVerified)$$
# Packages outside RACE_PKGS, as go list names them, the longest first so
# that none starts last and runs alone (go test keeps the order it is given).
SLOW_PKGS ?= ./test/airgap ./cmd/mirror ./cmd/release ./mirror/admission ./publish/local
PLAIN_PKGS = $$($(GO) list $(SLOW_PKGS) ./... | grep -v -e '^github.com/reloader-dev/reloader/controller\(/\|$$\)' -e '^github.com/reloader-dev/reloader/mirror/\(registry\|archive\)$$')

.PHONY: all build test test-plain vet test-compiles race race-pkgs race-mirror unit demo lint staticcheck-cache tools test-tools lint-tools bench fuzz release-local reloader-release-pkcs11 airgap-drill clean-tools

all: build

build:
	$(GO) build ./...

## tools: build the pinned etcd, kube-apiserver, kube-controller-manager,
## distribution registry, Trivy and the cosign and crane CLIs from the Go module
## proxy (cached outside git).
TOOL_SETS = trivy controlplane clients registry
# What only the tests run: built here, not inside a test's deadline, since
# the admission engines and cosign v3 take minutes to compile on a cold
# cache; `make demo` does not pay for them.
TEST_TOOL_SETS = kyverno policycontroller
tools: $(addprefix tool-,$(TOOL_SETS))

test-tools: $(addprefix tool-,$(TEST_TOOL_SETS) $(TOOL_SETS))

lint-tools: tool-lint

# One target a set (hack/tools/<set>), a no-op once the set is in its cache.
tool-%:
	@bash hack/tools/ensure.sh $* >/dev/null

# On an empty cache the sets and go vet are most of `make test`'s compiles,
# and two go commands compiling the same package at the same time both do
# the work: the build cache only shares what is finished. So everything but
# Trivy, which shares nothing (GOEXPERIMENT=jsonv2 changes every compile),
# builds in one chain, each step starting from the cache the one before it
# filled, the control plane and registry first since the race phase needs
# only those; Trivy builds beside the chain, and the race phase, whose
# instrumented compiles share nothing either, starts as soon as its tools
# are there.
# (Only in `make test`'s graph: alone, `make vet` or `make tools` wait on
# nothing they do not need.)
ifdef TEST_GRAPH
tool-registry: | tool-controlplane
vet: | tool-registry
test-compiles: | vet
tool-clients: | test-compiles
tool-policycontroller: | tool-clients
tool-kyverno: | tool-policycontroller
endif

# test-compiles compiles, once, what the plain tests' own go builds would
# otherwise compile several times at once: test packages running side by
# side each build the controller for a release (FIPS, arm64) or a FIPS
# reloader-mirror, and concurrent go commands do not wait for each other's
# compiles (seen on an empty cache: three FIPS builds of the controller
# compiling the same packages together). Each line compiles as those builds
# do (publish/build, tools.GoBuildEnv, reloadertest): static, -trimpath,
# GOFIPS140=certified or GOARCH=arm64. Builds only one test makes (the
# PKCS#11 test's cgo build) are left to it.
test-compiles:
	$(PLAIN_ENV) $(COMPILE_ENV) GOFIPS140=certified $(GO) build ./cmd/reloader ./cmd/mirror $(SMALLAPP)
	$(PLAIN_ENV) $(COMPILE_ENV) GOARCH=arm64 $(GO) build ./cmd/reloader
SMALLAPP = ./publish/releasetest/internal/smallapp

## vet: go vet, compiling as the plain tests do.
vet:
	$(PLAIN_ENV) $(COMPILE_ENV) $(GO) vet ./...

## test: every test, against the real control plane and registries.
# The plain and the race phases run side by side: most tests wait on an
# apiserver, a registry or an engine, and one phase alone leaves a core idle.
# -j: the chain, Trivy, the race phase, and (later) the plain phase; each go
# command runs its own compiles and test binaries in parallel.
# TEST_ALSO adds goals to that graph: CI adds staticcheck-cache.
test:
	@$(MAKE) --no-print-directory -j5 TEST_GRAPH=1 test-plain race $(TEST_ALSO)

test-plain: vet test-compiles test-tools
	$(PLAIN_ENV) $(GO) test -count=1 -p $(PLAIN_PARALLEL) -timeout $(TEST_TIMEOUT) -skip '$(RACE_MIRROR_TESTS)' $(PLAIN_PKGS)

## race: the tests of RACE_PKGS and RACE_MIRROR_TESTS with the race detector on,
## one after the other, so the second reuses the first's instrumented compiles.
race: race-pkgs race-mirror

race-pkgs: tool-controlplane tool-registry
	$(RACE_ENV) $(GO) test -race -count=1 -p $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) $(RACE_PKGS)

race-mirror: tool-registry | race-pkgs
	$(RACE_ENV) $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) -run '$(RACE_MIRROR_TESTS)' ./mirror

## unit: only the tests that need no real component (fast feedback).
unit:
	$(GO) test -count=1 -short ./...

## demo: a local control plane with the controller reloading a Deployment.
demo: tool-controlplane
	$(GO) run ./hack/demo

## lint: go vet, staticcheck, actionlint and helm lint --strict.
# staticcheck loads the packages it checks through `go list -export`, which
# compiles them: with PLAIN_ENV those are the compiles go vet and the plain
# tests made (and what ships is analysed as it is built, without cgo).
lint: lint-tools vet
	@bin=$$(bash hack/tools/ensure.sh lint); \
	  echo "staticcheck ./..."; $(PLAIN_ENV) "$$bin/staticcheck" ./...; \
	  if ls .github/workflows/*.y*ml >/dev/null 2>&1; then echo "actionlint"; "$$bin/actionlint" .github/workflows/*.y*ml; fi; \
	  for c in charts/*/; do [ -f "$$c/Chart.yaml" ] || continue; echo "helm lint --strict $$c"; "$$bin/helm" lint --strict "$$c"; done

# staticcheck-cache fills staticcheck's cache, niced, once go vet has
# compiled what it loads, and reports nothing: `make lint` does. On an empty
# cache staticcheck analyses every dependency from source, minutes of CPU
# that CI spends while tests wait on apiservers and registries
# (TEST_ALSO=staticcheck-cache) instead of after them.
staticcheck-cache: | vet
	@bin=$$(nice -n 10 bash hack/tools/ensure.sh lint) && $(PLAIN_ENV) nice -n 10 "$$bin/staticcheck" ./... >/dev/null 2>&1 || true

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
## pkcs11: keys, saying how to build this one. Otherwise it is built as the static
## builds are (STATIC_FLAGS: the pure-Go resolver and user lookup), so it compiles
## only the packages with cgo files anew.
reloader-release-pkcs11:
	CGO_ENABLED=1 $(GO) build $(filter-out -tags=%,$(STATIC_FLAGS)) -tags=$(STATIC_TAGS),pkcs11key -o _out/bin/reloader-release-pkcs11 ./cmd/release

## airgap-drill: only the air-gap drill (test/airgap), printing each step with its
## time: real release refused and accepted by real Trivy, export, import into two
## registries, values, Helm install, the mirrored controller reloading, tampering refused.
airgap-drill: tools
	$(GO) test -count=1 -v -timeout 20m -run '^TestAirGapDrill$$' ./test/airgap

clean-tools:
	rm -rf "$${RELOADER_TOOLS_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/reloader-dev/tools}"
