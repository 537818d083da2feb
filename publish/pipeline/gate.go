package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/reloader-dev/reloader/publish/build"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/gate"
)

func (r *run) gate(ctx context.Context) error {
	if r.opts.NoScan {
		fmt.Fprintln(r.log, "    WARNING: vulnerability scan SKIPPED (--no-scan); the lock marks this release unscanned")
		r.lock.Scan = &release.Scan{Skipped: true}
		return nil
	}
	pol, err := gate.LoadPolicy(r.opts.Scan.PolicyPath)
	if err != nil {
		return err
	}
	if err := r.checkDBAge(ctx); err != nil {
		return err
	}
	topts := r.opts.Scan.Trivy
	topts.OutputDir = filepath.Join(r.opts.OutDir, "trivy")
	var scanned []gate.ScannedImage
	for _, bi := range r.images {
		nm := bi.name + " " + bi.platform.String()
		_, rep, err := gate.ScanImage(ctx, topts, r.layout, bi.digest.String(), bi.name+"-"+build.PlatformDir(bi.platform))
		if err != nil {
			// Fail closed: the image is judged with no report.
			fmt.Fprintf(r.log, "    %s: %v\n", nm, err)
		}
		scanned = append(scanned, gate.ScannedImage{Image: nm, Report: rep})
	}
	res := gate.Evaluate(pol, scanned, r.opts.Now)
	r.res.Gate = &res
	if err := res.WriteTable(r.log); err != nil {
		return err
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the gate verdict: %w", err)
	}
	if err := os.WriteFile(filepath.Join(r.opts.OutDir, "gate.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the gate verdict: %w", err)
	}
	if !res.Passed {
		return fmt.Errorf("%w; nothing was pushed, tagged or signed", gate.ErrRefused)
	}
	info, err := gate.Scanner(ctx, topts)
	if err != nil {
		return fmt.Errorf("recording the scan in the lock: %w", err)
	}
	r.lock.Scan = scanRecord(info, res)
	return nil
}

// scanRecord is what the lock says about a scan that passed.
func scanRecord(info gate.ScannerInfo, res gate.Result) *release.Scan {
	sc := &release.Scan{Scanner: "trivy", ScannerVersion: info.Version, DBDigest: info.DBDigest, DBBuilt: info.DBBuilt,
		Counts: map[string]int{}}
	// Every severity is recorded, zeros included: "0 CRITICAL" is a fact.
	for _, sev := range []gate.Severity{gate.SeverityCritical, gate.SeverityHigh, gate.SeverityMedium, gate.SeverityLow, gate.SeverityUnknown} {
		sc.Counts[string(sev)] = 0
	}
	for sev, n := range res.Counts {
		sc.Counts[string(sev)] = n
	}
	sc.Findings = recordedFindings(res)
	for _, e := range res.AppliedExceptions {
		sc.Exceptions = append(sc.Exceptions, release.ScanException{ID: e.ID, Package: e.Package,
			Expires: e.Expires.Format(time.DateOnly), Justification: e.Justification,
			Kind: string(e.EffectiveKind()), VEXJustification: e.VEXJustification})
	}
	return sc
}
