package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reloader-dev/reloader/publish/page"
	"github.com/reloader-dev/reloader/sbom"
)

func (r *run) generateSBOMs(ctx context.Context) error {
	dir := filepath.Join(r.opts.OutDir, "sbom")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The module cache the binaries were just built from holds every
	// dependency's licence; syft reads them there, offline.
	modCache, err := sbom.GoModCache(ctx, r.opts.ModuleDir)
	if err != nil {
		return err
	}
	// One licence scanner for the release's every image, not one each.
	if ctx, err = sbom.WithLicenseScanner(ctx); err != nil {
		return err
	}
	for _, bi := range r.images {
		sec := r.security
		docs, err := sbom.Generate(ctx, bi.img, sbom.Options{Name: bi.name, Version: r.opts.Version, Created: r.opts.Created,
			Namespace: r.opts.Source + "/sbom", WorkDir: r.opts.OutDir, GoModCache: modCache,
			ModuleLicenceFile: filepath.Join(r.opts.ModuleDir, "LICENSE"),
			MainModule:        "github.com/reloader-dev/reloader", Producer: sec.Producer,
			ProducerURL: sec.ContactURL(), ProducerEmail: sec.ContactEmail(), SecurityTxt: sec.Canonical,
			Repository: bi.repo, SourceURI: r.opts.Source + "/tree/" + r.opts.Commit})
		if err != nil {
			return err
		}
		bi.docs = docs
		for _, d := range docs {
			p := filepath.Join(dir, page.SBOMFileName(bi.name, bi.platform.String(), d.MediaType))
			if err := os.WriteFile(p, d.Data, 0o644); err != nil {
				return fmt.Errorf("writing SBOM: %w", err)
			}
		}
		fmt.Fprintf(r.log, "    %-17s %-12s SPDX %d B, CycloneDX %d B\n", bi.name, bi.platform.String(), len(docs[0].Data), len(docs[1].Data))
	}
	return nil
}
