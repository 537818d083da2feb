package mirror

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/reloader-dev/reloader/internal/progress"
	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
)

// PushOptions configures Push.
type PushOptions struct {
	// Client talks to the target registry.
	Client *registry.Client
	// Target is the target location ("harbor.example/project"); Repos
	// maps individual repositories (see Mapping).
	Target string
	Repos  map[string]string
	// LockRepository receives the lock as an OCI artifact tagged with the
	// release version, relative to Target; "" means release.LockRepository.
	LockRepository string
	// Concurrency bounds parallel blob transfers (default 4).
	Concurrency int
	// Retries is how many times a transfer is retried after a temporary
	// failure (0 means 5, negative means none), with exponential backoff
	// from Backoff (default 200ms).
	Retries int
	Backoff time.Duration
	// Progress receives progress; nil reports nothing.
	Progress progress.Reporter
	// AllowDowngrade mirrors a release older than the newest the target
	// holds (refused otherwise); the receipt records it.
	AllowDowngrade bool
}

func (o *PushOptions) defaults() {
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.Retries == 0 {
		o.Retries = 5
	}
	if o.Retries < 0 {
		o.Retries = 0
	}
	if o.Backoff <= 0 {
		o.Backoff = 200 * time.Millisecond
	}
	if o.Progress == nil {
		o.Progress = progress.Discard{}
	}
	if o.LockRepository == "" {
		o.LockRepository = release.LockRepository
	}
}

// Stats counts what a run did; a re-run of a complete copy pushes nothing.
type Stats struct {
	BlobsPushed      int   `json:"blobsPushed"`
	BlobsMounted     int   `json:"blobsMounted"`
	BlobsPresent     int   `json:"blobsPresent"`
	BytesPushed      int64 `json:"bytesPushed"`
	ManifestsPushed  int   `json:"manifestsPushed"`
	ManifestsPresent int   `json:"manifestsPresent"`
	FallbackIndexes  int   `json:"fallbackIndexes"`
	TagsWritten      int   `json:"tagsWritten"`
	TagsPresent      int   `json:"tagsPresent"`
	Retries          int   `json:"retries"`
}

// ReceiptEntry says where one artifact of the lock went.
type ReceiptEntry struct {
	Kind     release.Kind `json:"kind"`
	Name     string       `json:"name"`
	Variant  string       `json:"variant,omitempty"`
	Platform string       `json:"platform,omitempty"`
	Source   string       `json:"source"`
	Target   string       `json:"target"`
	Tag      string       `json:"tag,omitempty"`
}

// Receipt is the record of a completed, verified mirror run.
type Receipt struct {
	Version      string            `json:"version"`
	LockDigest   string            `json:"lockDigest"`
	Lock         string            `json:"lock"`
	Target       string            `json:"target"`
	Referrers    map[string]string `json:"referrers"`
	Verification *trust.Result     `json:"verification"`
	Entries      []ReceiptEntry    `json:"entries"`
	Tags         []TagChange       `json:"tags,omitempty"`
	Stats        Stats             `json:"stats"`
	Duration     string            `json:"duration"`
	// Downgrade is set when an older release was mirrored over a newer
	// one because AllowDowngrade said so.
	Downgrade *Downgrade `json:"downgrade,omitempty"`
	// Standing is the release's judgment as the command made it, with any
	// refusal the user accepted (an advisory, an ended or unlisted series)
	// on record; the caller that judged it sets it.
	Standing *Standing `json:"standing,omitempty"`
}

// Push writes the verified release to the target in a safe order, verifies
// it again as stored at the target, and only then writes tags. It returns
// the receipt of a complete run.
func (rel *Verified) Push(ctx context.Context, opts PushOptions) (*Receipt, error) {
	opts.defaults()
	start := time.Now()
	sv, err := rel.survey.answersFor(ctx, opts)
	if err != nil {
		return nil, err
	}
	m, err := NewMapping(opts.Target, rel.Lock, opts.Repos)
	if err != nil {
		return nil, err
	}
	downgrade, err := checkDowngrade(ctx, opts.Client, m.Target+"/"+opts.LockRepository, rel.Lock.Version, opts.AllowDowngrade)
	if err != nil {
		return nil, err
	}
	w := &writer{opts: opts, rel: rel, m: m, g: rel.Graph, present: map[string]string{}, sv: sv}
	if err := w.blobs(ctx); err != nil {
		return nil, err
	}
	if err := w.manifests(ctx); err != nil {
		return nil, err
	}
	trel, err := w.readBack(ctx)
	if err != nil {
		return nil, fmt.Errorf("verifying the copy at the target (no tag was written): %w", err)
	}
	refs, err := w.referrers(ctx)
	if err != nil {
		return nil, err
	}
	if err := w.tags(ctx); err != nil {
		return nil, err
	}
	if err := w.pushLock(ctx, rel.Lock); err != nil {
		return nil, err
	}
	rc := &Receipt{
		Version: rel.Lock.Version, LockDigest: rel.LockResult.Digest,
		Lock:   m.Target + "/" + opts.LockRepository + ":" + rel.Lock.Version,
		Target: m.Target, Referrers: refs, Verification: trel.Verification,
		Stats: w.stats, Duration: time.Since(start).Round(time.Millisecond).String(), Tags: w.tagChanges, Downgrade: downgrade,
	}
	for _, a := range rel.Lock.Artifacts {
		rc.Entries = append(rc.Entries, ReceiptEntry{
			Kind: a.Kind, Name: a.Name, Variant: a.Variant, Platform: a.Platform,
			Source: a.Repository + "@" + a.Digest, Target: m.Repository(a.Repository) + "@" + a.Digest, Tag: a.Tag,
		})
	}
	return rc, nil
}

// readBack verifies the copy as the target stores it: every manifest by
// digest from the target, every signature verified again from the target's
// bytes, then every blob present. What the survey read from the target
// before Push is not read again (survey.go).
func (w *writer) readBack(ctx context.Context) (*Verified, error) {
	w.opts.Progress.Phase("verifying at target", int64(len(w.g.Nodes)), false)
	var tsrc Source = &RegistrySource{Client: w.opts.Client, Map: w.m.Repository, Name: "target " + w.m.Target, Concurrency: w.opts.Concurrency}
	if w.sv != nil {
		tsrc = surveyedTarget{tsrc.(*RegistrySource), w.sv}
	}
	trel, err := w.rel.signed.Verify(ctx, tsrc)
	if err == nil {
		// Verify reads the graph whole, so the phase is done at once
		// ("done, 79" rather than "done, 0").
		w.opts.Progress.Add(int64(len(w.g.Nodes)))
	}
	w.opts.Progress.Done()
	if err != nil {
		return nil, err
	}
	return trel, w.checkBlobs(ctx)
}

type writer struct {
	opts  PushOptions
	rel   *Verified
	m     *Mapping
	g     *Graph
	stats Stats
	bytes atomic.Int64
	mu    sync.Mutex
	// present maps a blob digest to a target repository path known to
	// hold it, for cross-repository mounts.
	present map[string]string
	// tagChanges records each tag's old and new digest (tags.go).
	tagChanges []TagChange
	// sv is what the target held before Push began (VerifyToPush), nil
	// when nobody asked: then each blob and manifest is asked for in turn.
	sv *survey
}

func (w *writer) repo(ctx context.Context, lockRepo string) (*registry.Repository, error) {
	return w.opts.Client.Repository(ctx, w.m.Repository(lockRepo), true)
}

// retry runs fn until it succeeds, fails for good, or attempts run out.
func (w *writer) retry(ctx context.Context, what string, fn func() error) error {
	delay := w.opts.Backoff
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil {
			return nil
		}
		if IsDigestMismatch(err) || !registry.Temporary(err) || attempt >= w.opts.Retries {
			return fmt.Errorf("%s: %w", what, err)
		}
		w.mu.Lock()
		w.stats.Retries++
		w.mu.Unlock()
		w.opts.Progress.Logf("retrying %s after: %v", what, err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-time.After(delay):
		}
		delay *= 2
	}
}

// How a target lists referrers, as a receipt and a plan report it.
const (
	referrersAPI         = "referrers-api"
	referrersTagFallback = "tag-fallback"
)

// referrers makes every referrer discoverable at the target. A registry with
// the referrers API lists them itself; for one without, the OCI tag-fallback
// index (tag "sha256-<hex>") is written, merged with what is already there
// and keeping each descriptor's artifactType and annotations.
func (w *writer) referrers(ctx context.Context) (map[string]string, error) {
	bySubject := map[string][]*Node{}
	var keys []string
	for _, n := range w.g.Nodes {
		if n.Subject != "" {
			k := n.Repository + "@" + n.Subject
			if _, ok := bySubject[k]; !ok {
				keys = append(keys, k)
			}
			bySubject[k] = append(bySubject[k], n)
		}
	}
	sort.Strings(keys)
	// The probes are reads, up to Concurrency at a time; the fallback
	// indexes are then written one at a time, in subject order.
	type probe struct {
		dst       *registry.Repository
		supported bool
		err       error
	}
	probes := readAll(ctx, w.opts.Concurrency, keys, func(ctx context.Context, k string) probe {
		dst, err := w.repo(ctx, bySubject[k][0].Repository)
		if err != nil {
			return probe{err: err}
		}
		_, supported, err := dst.Referrers(ctx, bySubject[k][0].Subject)
		if err != nil {
			err = fmt.Errorf("probing the referrers API of %s: %w", dst.Name, err)
		}
		return probe{dst, supported, err}
	})
	modes := map[string]string{}
	for i, k := range keys {
		p := probes[i]
		if p.err != nil {
			return nil, p.err
		}
		if p.supported {
			modes[p.dst.Name] = referrersAPI
			continue
		}
		modes[p.dst.Name] = referrersTagFallback
		if err := w.fallback(ctx, p.dst, bySubject[k][0].Subject, bySubject[k]); err != nil {
			return nil, err
		}
	}
	return modes, nil
}

func (w *writer) fallback(ctx context.Context, dst *registry.Repository, subject string, refs []*Node) error {
	tag := strings.Replace(subject, ":", "-", 1)
	idx := manifestDoc{}
	var existing []descriptor
	raw, _, err := dst.GetManifest(ctx, tag)
	switch {
	case err == nil:
		if err := json.Unmarshal(raw, &idx); err != nil {
			return fmt.Errorf("decoding the referrers fallback index %s:%s: %w", dst.Name, tag, err)
		}
		existing = idx.Manifests
	case registry.IsNotFound(err):
	default:
		return fmt.Errorf("reading the referrers fallback index %s:%s: %w", dst.Name, tag, err)
	}
	have := map[string]bool{}
	for _, d := range existing {
		have[d.Digest] = true
	}
	merged := existing
	for _, n := range refs {
		if have[n.Digest] {
			continue
		}
		merged = append(merged, descriptor{MediaType: n.MediaType, Digest: n.Digest, Size: n.Size, ArtifactType: n.ArtifactType, Annotations: n.Annotations})
	}
	if len(merged) == len(existing) {
		w.stats.TagsPresent++
		return nil
	}
	out, err := json.Marshal(struct {
		SchemaVersion int          `json:"schemaVersion"`
		MediaType     string       `json:"mediaType"`
		Manifests     []descriptor `json:"manifests"`
	}{2, string(types.OCIImageIndex), merged})
	if err != nil {
		return fmt.Errorf("encoding the referrers fallback index: %w", err)
	}
	err = w.retry(ctx, "writing referrers fallback index "+dst.Name+":"+tag, func() error {
		_, err := dst.PutManifest(ctx, tag, string(types.OCIImageIndex), out)
		return err
	})
	if err != nil {
		return err
	}
	w.stats.FallbackIndexes++
	return nil
}

// tags writes the lock's tags last, each only after everything it names has
// been verified at the target. What each tag points at now is read first,
// up to Concurrency at a time (on a re-run most already point right); the
// writes then go one at a time, in graph order, as they always did.
func (w *writer) tags(ctx context.Context) error {
	type tagged struct {
		dst *registry.Repository
		tag string
		n   *Node
	}
	var todo []tagged
	for _, n := range w.g.Nodes {
		if tag := n.Tag(); tag != "" {
			dst, err := w.repo(ctx, n.Repository)
			if err != nil {
				return err
			}
			todo = append(todo, tagged{dst, tag, n})
		}
	}
	olds := readAll(ctx, w.opts.Concurrency, todo, func(ctx context.Context, t tagged) fetched {
		old, err := w.tagBefore(ctx, t.dst, t.tag)
		return fetched{[]byte(old), err}
	})
	written := map[string]bool{}
	for i, t := range todo {
		old, err := string(olds[i].raw), olds[i].err
		if k := t.dst.Name + ":" + t.tag; written[k] {
			// A tag named twice: what the first write left is what
			// it points at now.
			old, err = w.tagBefore(ctx, t.dst, t.tag)
		} else {
			written[k] = true
		}
		if err != nil {
			return err
		}
		if err := w.tag(ctx, t.dst, t.tag, t.n, old); err != nil {
			return err
		}
	}
	return nil
}

// pushLock stores the lock and its bundle at the target, so the
// disconnected side can verify from the registry alone.
func (w *writer) pushLock(ctx context.Context, l *release.Lock) error {
	art, err := NewLockArtifact(w.rel.signed.json, w.rel.signed.bundle)
	if err != nil {
		return err
	}
	dst, err := w.opts.Client.Repository(ctx, w.m.Target+"/"+w.opts.LockRepository, true)
	if err != nil {
		return err
	}
	for _, b := range art.Blobs {
		_, ok, err := dst.HeadBlob(ctx, b.Digest)
		if err != nil {
			return fmt.Errorf("storing the lock in %s: %w", dst.Name, err)
		}
		if !ok {
			if err := w.retry(ctx, "storing the lock in "+dst.Name, func() error {
				return dst.PushBlob(ctx, b.Digest, int64(len(b.Data)), strings.NewReader(string(b.Data)))
			}); err != nil {
				return err
			}
		}
	}
	old, err := w.tagBefore(ctx, dst, l.Version)
	if err != nil {
		return err
	}
	if old == registry.Digest(art.Manifest) {
		// A re-run: the tag already names this lock, as tags do
		// their manifests (tag).
		w.noteTag(dst, l.Version, old, old, nil)
		return nil
	}
	if err := w.retry(ctx, "storing the lock in "+dst.Name, func() error {
		_, err := dst.PutManifest(ctx, l.Version, release.LockManifestMediaType, art.Manifest)
		return err
	}); err != nil {
		return err
	}
	w.noteTag(dst, l.Version, old, registry.Digest(art.Manifest), nil)
	return nil
}
