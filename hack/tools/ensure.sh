#!/usr/bin/env bash
# Usage: hack/tools/ensure.sh [controlplane|registry|lint|trivy|clients|policycontroller|kyverno|bench]
#
# Builds one set of pinned third-party binaries from the Go module proxy into a
# cache directory outside git and prints that directory. Each set is a tools
# module of its own (hack/tools/<set>/go.mod, a `tool` block, go.sum committed),
# so their dependency graphs never constrain each other or the product module.
#
# Release binaries cannot be downloaded on our CI machines, so they are compiled.
# The directory is keyed by the set's go.mod, go.sum and build flags: a changed
# pin builds a new set, an unchanged one costs nothing. A lock serialises
# concurrent callers (several test packages may ask at once).
set -euo pipefail
set_name=${1:-controlplane}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mod="$here/$set_name"
[ -f "$mod/go.mod" ] || { echo "ensure.sh: unknown tool set '$set_name' (no $mod/go.mod)" >&2; exit 2; }

ldflags="-s -w"
# The flags of every static build (publish/build.Flags, the Makefile's
# STATIC_FLAGS; test/buildflags_test.go holds them equal), so the sets share
# compiles with each other and with the product's tests.
static_flags="-trimpath -buildvcs=false -tags=netgo,osusergo -gcflags=all=-dwarf=false"
goexperiment=${GOEXPERIMENT:-}
case "$set_name" in
controlplane)
  ldflags="$ldflags -X k8s.io/component-base/version.gitVersion=v1.37.2 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37 -X k8s.io/component-base/version.gitTreeState=clean"
  ;;
trivy)
  # Trivy v0.74 uses encoding/json/v2, which Go 1.26 only compiles behind this
  # experiment. Its version string is stamped by ldflags in upstream releases;
  # without it `trivy --version` says "dev" and reports could not name it.
  goexperiment=jsonv2
  trivy_version=$(cd "$mod" && go list -m -f '{{.Version}}' github.com/aquasecurity/trivy)
  ldflags="$ldflags -X github.com/aquasecurity/trivy/pkg/version/app.ver=${trivy_version#v}"
  ;;
clients)
  # cosign prints this as its version (upstream stamps it the same way).
  cosign_version=$(cd "$mod" && go list -m -f '{{.Version}}' github.com/sigstore/cosign/v2)
  ldflags="$ldflags -X sigs.k8s.io/release-utils/version.gitVersion=$cosign_version"
  ;;
kyverno)
  # Upstream's Makefile stamps the version the same way; without it the
  # binary reports "---" and its logs could not name the engine.
  # cosign v3 is built in this set too: Kyverno links cosign v3's library,
  # so one dependency graph compiles the packages they share once instead
  # of twice (a set of its own cost 283 + 67 s of CPU on a cold cache).
  kyverno_version=$(cd "$mod" && go list -m -f '{{.Version}}' github.com/kyverno/kyverno)
  cosign_version=$(cd "$mod" && go list -m -f '{{.Version}}' github.com/sigstore/cosign/v3)
  ldflags="$ldflags -X github.com/kyverno/kyverno/pkg/version.BuildVersion=$kyverno_version -X sigs.k8s.io/release-utils/version.gitVersion=$cosign_version"
  ;;
policycontroller)
  pc_version=$(cd "$mod" && go list -m -f '{{.Version}}' github.com/sigstore/policy-controller)
  ldflags="$ldflags -X sigs.k8s.io/release-utils/version.gitVersion=$pc_version"
  ;;
esac
key=$( { cat "$mod/go.mod" "$mod/go.sum"; echo "$static_flags $ldflags${goexperiment:+ GOEXPERIMENT=$goexperiment}"; go env GOVERSION GOOS GOARCH; } | sha256sum | cut -c1-16)
cache=${RELOADER_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reloader-dev/tools}
dir="$cache/$set_name-$key"
mkdir -p "$cache"
exec 9>"$cache/.lock-$set_name"
flock 9
if [ ! -f "$dir/.complete" ]; then
  echo "ensure.sh: building the $set_name tools into $dir (a cold build takes minutes)" >&2
  built_from=$(date +%s)
  rm -rf "$dir.tmp"
  mkdir -p "$dir.tmp"
  (
    cd "$mod"
    # shellcheck disable=SC2046,SC2086
    # GOGC=400: the compiler collects garbage less often (measured: 5% less
    # CPU on a cold compile of the controller); memory is not what limits
    # these builds. It changes no compile's cache key.
    CGO_ENABLED=0 GOEXPERIMENT=$goexperiment GOGC=400 go build $static_flags -ldflags "$ldflags" -o "$dir.tmp/" $(go list tool)
  )
  # etcd's main package is its module root, so the binary comes out as "server".
  [ -f "$dir.tmp/server" ] && mv "$dir.tmp/server" "$dir.tmp/etcd"
  # policy-controller's main packages are cmd/tester and cmd/webhook; give
  # them the names upstream ships them under.
  [ -f "$dir.tmp/tester" ] && mv "$dir.tmp/tester" "$dir.tmp/policy-tester"
  [ -f "$dir.tmp/webhook" ] && mv "$dir.tmp/webhook" "$dir.tmp/policy-controller"
  touch "$dir.tmp/.complete"
  rm -rf "$dir"
  mv "$dir.tmp" "$dir"
  echo "ensure.sh: built the $set_name tools in $(( $(date +%s) - built_from ))s" >&2
fi
echo "$dir"
