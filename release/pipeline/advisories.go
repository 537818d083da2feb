package pipeline

import (
	"context"
	"encoding/json"
	"path/filepath"

	"github.com/reloader-dev/reloader/release/support"
)

// supportFiles are where the support table and advisories are read from:
// the options' overrides, else the checkout's release/ directory.
func (o *Options) supportFiles() (table, advisories string) {
	table, advisories = o.SupportFile, o.AdvisoriesDir
	if table == "" {
		table = filepath.Join(o.ModuleDir, "release", "support.yaml")
	}
	if advisories == "" {
		advisories = filepath.Join(o.ModuleDir, "release", "advisories")
	}
	return table, advisories
}

// recordSupport writes the support table and the advisories, as they stand
// now, into the lock, so the signed lock of this release tells consumers
// about every older release. It runs first: a malformed advisory stops the
// release before anything is built.
func (r *run) recordSupport(context.Context) error {
	tablePath, dir := r.opts.supportFiles()
	tab, err := support.ReadTable(tablePath)
	if err != nil {
		return err
	}
	advisories, err := support.ReadAdvisories(dir)
	if err != nil {
		return err
	}
	r.lock.Support = tab
	r.lock.Advisories = make([]json.RawMessage, len(advisories))
	for i, a := range advisories {
		r.lock.Advisories[i] = json.RawMessage(a.Raw)
	}
	r.support, r.advisories = tab, advisories
	return nil
}
