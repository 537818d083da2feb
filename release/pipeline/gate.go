package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reloader-dev/reloader/internal/build"
	"github.com/reloader-dev/reloader/policy"
)

func (r *run) gate(ctx context.Context) error {
	if r.opts.Scan == nil {
		fmt.Fprintln(r.log, "    WARNING: vulnerability scan SKIPPED (no trivy); this release must not be published")
		return nil
	}
	pol, err := policy.ReadPolicy(r.opts.Scan.PolicyPath)
	if err != nil {
		return err
	}
	topts := r.opts.Scan.Trivy
	topts.OutputDir = filepath.Join(r.opts.OutDir, "trivy")
	var scanned []policy.ScannedImage
	for _, bi := range r.images {
		ref := bi.repo + "@" + bi.digest.String()
		nm := bi.name + " " + bi.platform.String()
		_, rep, err := policy.ScanImage(ctx, topts, ref, bi.name+"-"+build.PlatformDir(bi.platform))
		if err != nil {
			// Fail closed: the image is judged with no report.
			fmt.Fprintf(r.log, "    %s: %v\n", nm, err)
		}
		scanned = append(scanned, policy.ScannedImage{Image: nm, Report: rep})
	}
	res := policy.Evaluate(pol, scanned, r.opts.Now)
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
		return fmt.Errorf("%w; nothing was tagged or signed", policy.ErrRefused)
	}
	return nil
}
