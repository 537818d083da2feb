package mirror

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reloader-dev/reloader/release/csaf"
	"github.com/reloader-dev/reloader/release/support"
)

// DocumentVerifier checks the Sigstore bundle of a document the release
// signed (trust.Verifier.Document, bound to the verified lock).
type DocumentVerifier func(what string, data, bundle []byte) error

// AdvisoriesFromSignedDir reads a directory of advisories in either format:
// OSV documents (<ID>.json), trusted as given as AdvisoriesFromDir trusts
// them, and CSAF 2.0 documents as a release publishes them next to its
// versions page (csaf/), each of which must carry its Sigstore bundle
// (<file>.sigstore.json) and verify: a CSAF document that was altered, or
// that the release's signer did not sign, refuses the whole directory
// (trust.ErrUntrusted), since an advisory left out or changed is how a
// refusal would be dodged. CSAF VEX documents are verified and skipped:
// they mark no release affected. A support.yaml is read as
// AdvisoriesFromDir reads it.
func AdvisoriesFromSignedDir(dir string, verify DocumentVerifier) (*AdvisorySource, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("--advisories %s: %w", dir, err)
	}
	src := &AdvisorySource{Name: dir + " (a directory: OSV files trusted as given, CSAF files verified)"}
	bundles := map[string]bool{}
	signed := 0
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == "README.md" || name == "support.yaml":
			continue
		case strings.HasSuffix(name, csaf.BundleSuffix):
			bundles[strings.TrimSuffix(name, csaf.BundleSuffix)] = true
			continue
		case e.IsDir() || filepath.Ext(name) != ".json":
			return nil, fmt.Errorf("--advisories %s: %s is neither an OSV nor a CSAF .json file", dir, name)
		}
		a, isCSAF, err := readAdvisoryFile(dir, name, verify)
		if err != nil {
			return nil, fmt.Errorf("--advisories %s: %w", dir, err)
		}
		if isCSAF {
			signed++
			delete(bundles, name)
		}
		if a != nil {
			src.Advisories = append(src.Advisories, a)
		}
	}
	for doc := range bundles {
		if _, err := os.Stat(filepath.Join(dir, doc)); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("--advisories %s: bundle %s%s signs %s, which is missing", dir, doc, csaf.BundleSuffix, doc)
		}
	}
	sort.Slice(src.Advisories, func(i, j int) bool { return src.Advisories[i].ID < src.Advisories[j].ID })
	src.Verified = signed > 0 && signed == len(entriesOf(entries))
	if p := filepath.Join(dir, "support.yaml"); exists(p) {
		if src.Support, err = support.ReadTable(p); err != nil {
			return nil, fmt.Errorf("--advisories %s: %w", dir, err)
		}
	}
	return src, nil
}

// readAdvisoryFile reads one document: a CSAF one is verified before it is
// read. It returns no advisory for a verified CSAF VEX document.
func readAdvisoryFile(dir, name string, verify DocumentVerifier) (a *support.Advisory, isCSAF bool, err error) {
	path := filepath.Join(dir, name)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false, err
	}
	if !csaf.IsCSAF(data) {
		a, err := support.ParseAdvisory(data)
		if err != nil {
			return nil, false, fmt.Errorf("advisory %s: %w", name, err)
		}
		if want := a.ID + ".json"; name != want {
			return nil, false, fmt.Errorf("advisory %s: holds %s, so its file name must be %s", name, a.ID, want)
		}
		return a, false, nil
	}
	if verify == nil {
		return nil, true, fmt.Errorf("CSAF document %s: no verifier to check its signature with", name)
	}
	bundle, err := os.ReadFile(path + csaf.BundleSuffix)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, true, err
	}
	if err := verify("CSAF document "+name, data, bundle); err != nil {
		return nil, true, err
	}
	a, err = csaf.ParseAdvisory(data)
	if errors.Is(err, csaf.ErrNotAdvisory) {
		return nil, true, nil
	}
	if err != nil {
		return nil, true, fmt.Errorf("CSAF document %s: %w", name, err)
	}
	if want := csaf.FileName(a.ID); name != want {
		return nil, true, fmt.Errorf("CSAF document %s: holds %s, so its file name must be %s", name, a.ID, want)
	}
	return a, true, nil
}

// entriesOf counts the documents of a directory listing (not bundles,
// README.md or support.yaml).
func entriesOf(entries []os.DirEntry) []string {
	var out []string
	for _, e := range entries {
		n := e.Name()
		if n != "README.md" && n != "support.yaml" && !strings.HasSuffix(n, csaf.BundleSuffix) {
			out = append(out, n)
		}
	}
	return out
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
