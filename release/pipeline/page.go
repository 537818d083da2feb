package pipeline

import (
	"context"
	"path/filepath"

	"github.com/reloader-dev/reloader/release/page"
)

func (r *run) page(context.Context) error {
	return page.Write(filepath.Join(r.opts.OutDir, "page"), r.lock, page.Options{SBOMBaseURL: "../sbom/", LockRef: r.res.LockRef,
		Provenance: r.provSummaries})
}
