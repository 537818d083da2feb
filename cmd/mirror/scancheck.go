package main

import (
	"errors"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/release/scancheck"
)

// checkScanEarly verifies the lock once as soon as the release is opened,
// so the scan check refuses before any command does work, and its warnings
// are printed once rather than by every later verification. With -o json a
// refusal is reported as the scan check's result.
func (g *globals) checkScanEarly(in *releaseInput) error {
	if in.policy.Scan == nil {
		return nil
	}
	_, lr, err := in.verifier.Lock(in.lockJSON, in.lockBundle)
	var re *scancheck.RefusedError
	if errors.As(err, &re) && g.out.JSON() {
		_ = g.emit(map[string]any{"version": re.Version, "verified": false, "scanCheck": re.Result, "error": err.Error()}, nil)
	}
	if err != nil {
		return err
	}
	cli.WriteScanWarnings(g.stderr, lr.Scan)
	return nil
}

// scanPolicy is the consumer scan policy of the flags; now is the wall
// clock unless a test fixes it. review applies none: it reports.
func (g *globals) scanPolicy() (*scancheck.Policy, error) {
	if g.reviewing {
		return nil, nil
	}
	return g.scan.Policy(g.now)
}
