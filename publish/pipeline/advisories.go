package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"golang.org/x/mod/semver"

	"github.com/reloader-dev/reloader/internal/exitcode"
	"github.com/reloader-dev/reloader/release/security"
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

// shippedTable reads the support table the release will ship and refuses
// a version whose series it does not list: consumers refuse such a release,
// so cutting one would publish what no mirror admits. Run calls it before
// anything is built.
func (o *Options) shippedTable() (*support.Table, error) {
	path, _ := o.supportFiles()
	tab, err := support.ReadTable(path)
	if err != nil {
		return nil, err
	}
	if _, ok := tab.SeriesOf(o.Version); !ok {
		series := semver.MajorMinor(o.Version)
		return nil, exitcode.Mark(exitcode.Refused, fmt.Errorf("release %s: series %s is not listed in the support table the release ships (%s): add a row for %s (released, endOfSupport) before cutting it",
			o.Version, series, path, series))
	}
	return tab, nil
}

// recordSupport writes the support table and the advisories, as they stand
// now, into the lock, and reads the declared security contact, so the signed lock of this release tells consumers
// about every older release. It runs first: a malformed advisory stops the
// release before anything is signed.
func (r *run) recordSupport(context.Context) error {
	_, dir := r.opts.supportFiles()
	tab, err := r.opts.shippedTable()
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
	secPath := r.opts.SecurityFile
	if secPath == "" {
		secPath = filepath.Join(r.opts.ModuleDir, "release", "security.yaml")
	}
	if r.security, err = security.Read(secPath); err != nil {
		return err
	}
	return nil
}
