package main

import (
	"context"
	"fmt"
	"os"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/verify"
)

// verifiedLock reads the lock and verifies it, and every signature and
// attestation it lists (provenance included), as `verify` does: a rebuild
// runs `go build` with parameters from the provenance, so nothing of it may
// be taken from an unsigned or foreign document.
func (f *rebuildFlags) verifiedLock(ctx context.Context) (*release.Lock, error) {
	opts, err := f.options()
	if err != nil {
		return nil, err
	}
	bundle := f.bundle
	if bundle == "" {
		bundle = f.lock + ".sigstore.json"
	}
	lockBytes, err := os.ReadFile(f.lock)
	if err != nil {
		return nil, cli.Usage(fmt.Errorf("reading the lock: %w", err))
	}
	bundleBytes, err := os.ReadFile(bundle)
	if err != nil {
		return nil, cli.Usage(fmt.Errorf("reading the lock's signature bundle: %w", err))
	}
	l, err := verify.Lock(ctx, lockBytes, bundleBytes, opts)
	if err != nil {
		return nil, err
	}
	if _, err := verify.Artifacts(ctx, l, opts); err != nil {
		return nil, fmt.Errorf("rebuild: %w", err)
	}
	return l, nil
}
