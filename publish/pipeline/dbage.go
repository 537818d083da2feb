package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/reloader-dev/reloader/release/gate"
)

// checkDBAge refuses, before anything is scanned, a release that would be
// judged with a database nobody refreshed: with --skip-db-update the gate
// uses whatever the cache holds, and a month-old database knows nothing of
// this month's CVEs, so "passed the gate" would mean little. A database
// Trivy downloads for the run is current by construction.
func (r *run) checkDBAge(ctx context.Context) error {
	so := r.opts.Scan
	if so.MaxDBAge <= 0 || !so.Trivy.SkipDBUpdate {
		return nil
	}
	info, err := gate.Scanner(ctx, so.Trivy)
	if err != nil {
		return fmt.Errorf("%w: --skip-db-update needs the database in the cache to judge its age: %v", gate.ErrRefused, err)
	}
	if age := r.opts.Now.Sub(info.DBBuilt); age > so.MaxDBAge {
		return fmt.Errorf("%w: --skip-db-update with a vulnerability database built %s (%s ago), older than the %s allowed; update the database or raise --max-db-age; nothing was built, pushed or signed",
			gate.ErrRefused, info.DBBuilt.Format(time.RFC3339), age.Round(time.Minute), so.MaxDBAge)
	}
	return nil
}
