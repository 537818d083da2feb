package mirror

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/reloader-dev/reloader/internal/exitcode"
	"github.com/reloader-dev/reloader/mirror/archive"
	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release/trust"
)

// BaseRelease is the release a delta archive is made against: its lock
// verified with the caller's trust policy and every manifest fetched by
// the digests the lock pins, so what the delta leaves out is known from
// signed content alone.
type BaseRelease struct {
	Version    string
	LockDigest string
	Graph      *Graph
}

// LoadBase verifies the base release's lock with v and reads its manifests
// from src. Its signatures need not be verified again: the base is only
// used to decide what to leave out, and the importer verifies the whole new
// release, including what the target already holds, before any tag.
func LoadBase(ctx context.Context, lockJSON, lockBundle []byte, src Source, v *trust.Verifier) (*BaseRelease, error) {
	l, lr, err := v.Lock(lockJSON, lockBundle)
	if err != nil {
		return nil, fmt.Errorf("the release to make the delta against: %w", err)
	}
	g, err := BuildGraph(ctx, l, src)
	if err != nil {
		return nil, fmt.Errorf("reading release %s, to make the delta against: %w", l.Version, err)
	}
	return &BaseRelease{Version: l.Version, LockDigest: lr.Digest, Graph: g}, nil
}

// deltaPlan is what an export against a base leaves out.
type deltaPlan struct {
	delta archive.Delta
	// omitted holds the digests whose bytes the archive leaves out.
	omitted map[string]bool
}

// planDelta leaves out a manifest or blob only when the base release holds
// it in every repository the new release has it in: the target stores
// content per repository, and a copy the base lacks must travel.
func planDelta(g *Graph, base *BaseRelease) (*deltaPlan, error) {
	if base.LockDigest == "" {
		return nil, errors.New("the base release has no lock digest")
	}
	p := &deltaPlan{delta: archive.Delta{Since: archive.DeltaBase{Version: base.Version, LockDigest: base.LockDigest},
		Manifests: []archive.Omitted{}, Blobs: []archive.Omitted{}}, omitted: map[string]bool{}}
	inBase := map[string]bool{}
	for _, n := range base.Graph.Nodes {
		inBase[n.Repository+"@"+n.Digest] = true
	}
	for _, b := range base.Graph.Blobs() {
		inBase[b.Repository+"@"+b.Digest] = true
	}
	manifests := map[string][]*Node{}
	var order []string
	for _, n := range g.Nodes {
		if _, ok := manifests[n.Digest]; !ok {
			order = append(order, n.Digest)
		}
		manifests[n.Digest] = append(manifests[n.Digest], n)
	}
	for _, d := range order {
		all := true
		for _, n := range manifests[d] {
			all = all && inBase[n.Repository+"@"+n.Digest]
		}
		if !all {
			continue
		}
		p.omitted[d] = true
		for _, n := range manifests[d] {
			p.delta.Manifests = append(p.delta.Manifests, archive.Omitted{Repository: n.Repository, Digest: n.Digest, Size: n.Size})
		}
	}
	for _, copies := range byDigest(g.Blobs()) {
		all := true
		for _, b := range copies {
			all = all && inBase[b.Repository+"@"+b.Digest]
		}
		if !all {
			continue
		}
		p.omitted[copies[0].Digest] = true
		for _, b := range copies {
			p.delta.Blobs = append(p.delta.Blobs, archive.Omitted{Repository: b.Repository, Digest: b.Digest, Size: b.Size})
		}
	}
	return p, nil
}

// checkBaseOrder refuses a base that is the release itself or a newer one:
// a delta goes forward from what the target runs.
func checkBaseOrder(version string, lockDigest string, base *BaseRelease) error {
	if base.LockDigest == lockDigest {
		return fmt.Errorf("--since names release %s itself: a delta against it would hold nothing", version)
	}
	cur, old := "v"+strings.TrimPrefix(version, "v"), "v"+strings.TrimPrefix(base.Version, "v")
	if semver.IsValid(cur) && semver.IsValid(old) && semver.Compare(old, cur) >= 0 {
		return fmt.Errorf("--since names release %s, which is not older than %s: a delta goes from the release the target holds to a newer one", base.Version, version)
	}
	return nil
}

// ErrDeltaBaseMissing marks a delta import refused because the target lacks
// what the delta leaves out: nothing was pushed.
var ErrDeltaBaseMissing = exitcode.New(exitcode.Refused, "the target lacks the release this delta is against")

// CheckDeltaBase asks the target, by HEAD requests only, for every manifest
// and blob the delta leaves out, and refuses naming those missing and the
// release to import first. It runs before anything is pushed.
func CheckDeltaBase(ctx context.Context, c *registry.Client, m *Mapping, d *archive.Delta) error {
	var missing []string
	check := func(kind string, o archive.Omitted) error {
		r, err := c.Repository(ctx, m.Repository(o.Repository), false)
		if err != nil {
			return err
		}
		var ok bool
		if kind == "manifest" {
			_, ok, err = r.HeadManifest(ctx, o.Digest)
		} else {
			_, ok, err = r.HeadBlob(ctx, o.Digest)
		}
		if err != nil {
			return fmt.Errorf("checking %s %s@%s at the target: %w", kind, r.Name, o.Digest, err)
		}
		if !ok {
			missing = append(missing, kind+" "+r.Name+"@"+o.Digest)
		}
		return nil
	}
	for _, o := range d.Manifests {
		if err := check("manifest", o); err != nil {
			return err
		}
	}
	for _, o := range d.Blobs {
		if err := check("blob", o); err != nil {
			return err
		}
	}
	if len(missing) == 0 {
		return nil
	}
	shown := missing
	if len(shown) > 10 {
		shown = append(shown[:10:10], fmt.Sprintf("and %d more", len(missing)-10))
	}
	return fmt.Errorf("%w: this archive is a delta against release %s (lock %s) and %s lacks %d of the %d manifests and blobs it leaves out: %s; import release %s into %s first, then this archive (nothing was pushed)",
		ErrDeltaBaseMissing, d.Since.Version, d.Since.LockDigest, m.Target, len(missing), len(d.Manifests)+len(d.Blobs),
		strings.Join(shown, ", "), d.Since.Version, m.Target)
}

// FallbackSource reads from First and, for what First does not hold, from
// Then: a delta archive, then the target that holds the base release.
// Content from either is checked against its digest by the reader, as
// from any source; only absence falls through, never a bad read.
type FallbackSource struct {
	First, Then Source
}

// Manifest implements Source.
func (s *FallbackSource) Manifest(ctx context.Context, repo, digest string) ([]byte, error) {
	b, err := s.First.Manifest(ctx, repo, digest)
	if errors.Is(err, fs.ErrNotExist) {
		return s.Then.Manifest(ctx, repo, digest)
	}
	return b, err
}

// Blob implements Source.
func (s *FallbackSource) Blob(ctx context.Context, repo, digest string) (io.ReadCloser, int64, error) {
	rc, n, err := s.First.Blob(ctx, repo, digest)
	if errors.Is(err, fs.ErrNotExist) {
		return s.Then.Blob(ctx, repo, digest)
	}
	return rc, n, err
}

func (s *FallbackSource) String() string { return s.First.String() + " and " + s.Then.String() }

// CheckDeltaComplete is the second check of a delta import, after the
// release verified: every blob of the verified release is in the archive
// or already at the target (HEAD only). delta.json is not signed, so it
// only gives the early answer; this one comes from the signed lock's
// graph, and still before anything is pushed.
func (rel *Verified) CheckDeltaComplete(ctx context.Context, c *registry.Client, m *Mapping, lay *archive.Layout, d *archive.Delta) error {
	var missing []string
	for _, rb := range rel.Graph.Blobs() {
		if lay.HasBlob(rb.Digest, rb.Size) {
			continue
		}
		r, err := c.Repository(ctx, m.Repository(rb.Repository), false)
		if err != nil {
			return err
		}
		_, ok, err := r.HeadBlob(ctx, rb.Digest)
		if err != nil {
			return fmt.Errorf("checking blob %s@%s at the target: %w", r.Name, rb.Digest, err)
		}
		if !ok {
			missing = append(missing, "blob "+r.Name+"@"+rb.Digest)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if len(missing) > 10 {
		missing = append(missing[:10:10], fmt.Sprintf("and %d more", len(missing)-10))
	}
	return fmt.Errorf("%w: release %s needs %s, which neither this delta archive (against %s) nor %s holds; import release %s into %s first (nothing was pushed)",
		ErrDeltaBaseMissing, rel.Lock.Version, strings.Join(missing, ", "), d.Since.Version, m.Target, d.Since.Version, m.Target)
}
