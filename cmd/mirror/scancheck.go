package main

import (
	"errors"
	"time"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/release/scancheck"
)

// verifyLock verifies the lock once, as soon as the release is opened: the
// signature, the signer, the release it is bound to and the scan record. So
// the scan check refuses before any command does work, its warnings are
// printed once, and every later step works from the verified lock. With
// -o json a scan refusal is reported as the scan check's result.
func (g *command) verifyLock(in *releaseInput) error {
	s, err := mirror.VerifyLock(in.lockJSON, in.lockBundle, in.verifier)
	var re *scancheck.RefusedError
	if errors.As(err, &re) && g.out.JSON() {
		_ = g.emit(map[string]any{"version": re.Version, "verified": false, "scanCheck": re.Result, "error": err.Error()}, nil)
	}
	if err != nil {
		return err
	}
	if in.policy.Scan != nil {
		cli.WriteScanWarnings(g.stderr, s.Result.Scan)
	}
	in.lock = s
	return nil
}

// scanPolicy is the consumer scan policy of the flags, judged at now (zero:
// the wall clock). review applies none: it reports.
func (j *judgmentFlags) scanPolicy(now time.Time) (*scancheck.Policy, error) {
	if j.reviewing {
		return nil, nil
	}
	return j.scan.Policy(now)
}
