package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reloader-dev/reloader/publish/page"
	"github.com/reloader-dev/reloader/release/csaf"
)

// CSAFDir is the directory, next to the versions page, of the CSAF 2.0
// documents and their Sigstore bundles.
const CSAFDir = "csaf"

// csafLinks are the links to the CSAF documents on the versions page.
type csafLinks []page.Link

// publishCSAF writes each advisory as a CSAF 2.0 security advisory and the
// release's OpenVEX statements as a CSAF VEX document, signs each with the
// release's signer (a Sigstore bundle, <file>.sigstore.json, which
// reloader-mirror checks before it reads one), and keeps their links for
// the versions page. Nothing is written when there is neither an advisory
// nor a VEX statement.
func (r *run) publishCSAF(ctx context.Context) error {
	if len(r.advisories) == 0 && r.vex == nil {
		return nil
	}
	dir := filepath.Join(r.opts.OutDir, "page", CSAFDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("writing the CSAF documents: %w", err)
	}
	pub := csaf.Publisher{Name: r.security.Producer, Namespace: r.opts.Source, Contact: r.security.Contact}
	docs := map[string][]byte{}
	var order []string
	for _, a := range r.advisories {
		doc, err := csaf.FromOSV(a, pub)
		if err != nil {
			return err
		}
		name := csaf.FileName(a.ID)
		docs[name], order = doc, append(order, name)
	}
	if r.vex != nil {
		id := csaf.VEXTrackingID(r.opts.Version)
		doc, err := csaf.FromOpenVEX(r.vex, csaf.VEXOptions{TrackingID: id, Release: r.opts.Version, Publisher: pub})
		if err != nil {
			return err
		}
		name := csaf.FileName(id)
		docs[name], order = doc, append(order, name)
	}
	signer, err := r.currentSigner(ctx)
	if err != nil {
		return err
	}
	for _, name := range order {
		bundle, err := signer.Blob(ctx, docs[name])
		if err != nil {
			return fmt.Errorf("signing the CSAF document %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), docs[name], 0o644); err != nil {
			return fmt.Errorf("writing the CSAF document %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+csaf.BundleSuffix), bundle, 0o644); err != nil {
			return fmt.Errorf("writing the CSAF document %s: %w", name, err)
		}
		r.csaf = append(r.csaf, page.Link{Name: name, URL: CSAFDir + "/" + name})
	}
	fmt.Fprintf(r.log, "    %d CSAF documents, signed, in %s\n", len(order), dir)
	return nil
}
