package mirror

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release/trust"
)

// TagAction says what a run did to one tag at the target.
type TagAction string

const (
	// TagCreated: the tag did not exist.
	TagCreated TagAction = "created"
	// TagUnchanged: the tag already pointed at the release's manifest, or
	// (a signature tag) at the merge of it with the target's signatures.
	TagUnchanged TagAction = "unchanged"
	// TagMoved: the tag pointed at another manifest and now points at the
	// release's.
	TagMoved TagAction = "moved"
	// TagMerged: a cosign .sig/.att tag held signatures the release does
	// not have (an organisation's countersignature); it now points at a
	// manifest with the release's layers first, then those, so none is
	// lost.
	TagMerged TagAction = "merged"
)

// TagChange is what one tag at the target pointed at before a run and after:
// the record an auditor needs when a tag was re-pointed. A Receipt lists
// every tag the run wrote or found (Receipt.Tags).
type TagChange struct {
	Repository string    `json:"repository"`
	Tag        string    `json:"tag"`
	Action     TagAction `json:"action"`
	// Old is the digest the tag pointed at before; "" when it was created.
	Old string `json:"old,omitempty"`
	New string `json:"new"`
	// Kept are the digests of the target's signature layers that the
	// release does not carry and that the tag keeps.
	Kept []string `json:"kept,omitempty"`
}

// maxSignatureLayers bounds a merged signature manifest, as cosign bounds
// the layers it reads from one.
const maxSignatureLayers = 1000

// maxSignatureConfigBytes bounds the config of a signature manifest read
// from the target: cosign's are a few hundred bytes.
const maxSignatureConfigBytes = 1 << 20

// tagBefore is what tag points at in dst now, "" if nothing.
func (w *writer) tagBefore(ctx context.Context, dst *registry.Repository, tag string) (string, error) {
	var d registry.Descriptor
	var exists bool
	if err := w.retry(ctx, fmt.Sprintf("reading tag %s:%s", dst.Name, tag), func() (err error) {
		d, exists, err = dst.HeadManifest(ctx, tag)
		return err
	}); err != nil {
		return "", err
	}
	if !exists {
		return "", nil
	}
	if d.Digest == "" {
		// Registries that omit Docker-Content-Digest on HEAD still
		// serve the bytes.
		raw, _, err := dst.GetManifest(ctx, tag)
		if err != nil {
			return "", fmt.Errorf("reading tag %s:%s: %w", dst.Name, tag, err)
		}
		return registry.Digest(raw), nil
	}
	return d.Digest, nil
}

// noteTag records a tag written or found, for the receipt and the output.
func (w *writer) noteTag(dst *registry.Repository, tag, old, now string, kept []string) {
	c := TagChange{Repository: dst.Name, Tag: tag, Old: old, New: now, Kept: kept}
	switch {
	case old == "":
		c.Action = TagCreated
	case old == now:
		c.Action = TagUnchanged
	case len(kept) > 0:
		c.Action = TagMerged
	default:
		c.Action = TagMoved
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tagChanges = append(w.tagChanges, c)
}

// countTag notes a tag of the lock's artifacts and counts it in the stats.
func (w *writer) countTag(dst *registry.Repository, tag, old, now string, kept []string) {
	w.noteTag(dst, tag, old, now, kept)
	w.mu.Lock()
	defer w.mu.Unlock()
	if old == now {
		w.stats.TagsPresent++
	} else {
		w.stats.TagsWritten++
	}
}

// tag points tag in dst at node n, after everything n names was verified at
// the target. A cosign signature or attestation tag that already holds
// signatures the release lacks is merged instead of overwritten: cosign's
// own `cosign sign` appends to that tag, and an organisation's
// countersignature there must survive a re-import. old is what the tag
// pointed at before (tagBefore).
func (w *writer) tag(ctx context.Context, dst *registry.Repository, tag string, n *Node, old string) error {
	what := fmt.Sprintf("tagging %s:%s", dst.Name, tag)
	if old == n.Digest {
		w.countTag(dst, tag, old, old, nil)
		return nil
	}
	raw, mediaType := n.Raw, n.MediaType
	var kept []string
	if old != "" && n.Artifact != nil && isCosignTag(*n) {
		m, err := w.mergeWithTarget(ctx, dst, tag, n)
		if err != nil {
			return fmt.Errorf("%s: keeping the signatures the target holds: %w", what, err)
		}
		if m != nil {
			kept = m.kept
			if m.unchanged {
				w.countTag(dst, tag, old, old, kept)
				return nil
			}
			raw = m.manifest
			if err := w.pushSmallBlob(ctx, dst, m.configDigest, m.config); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
		}
	}
	if err := w.retry(ctx, what, func() error { _, err := dst.PutManifest(ctx, tag, mediaType, raw); return err }); err != nil {
		return err
	}
	want := registry.Digest(raw)
	d, exists, err := dst.HeadManifest(ctx, tag)
	if err != nil || !exists || (d.Digest != "" && d.Digest != want) {
		return fmt.Errorf("%s: reading the tag back gave %q (%v), not %s", what, d.Digest, err, want)
	}
	w.countTag(dst, tag, old, want, kept)
	return nil
}

func isCosignTag(n Node) bool {
	f := trust.Format(*n.Artifact)
	return f == trust.FormatCosignSignature || f == trust.FormatCosignAttestation
}

func (w *writer) pushSmallBlob(ctx context.Context, dst *registry.Repository, digest string, data []byte) error {
	_, ok, err := dst.HeadBlob(ctx, digest)
	if err != nil {
		return fmt.Errorf("checking blob %s@%s: %w", dst.Name, digest, err)
	}
	if ok {
		return nil
	}
	return w.retry(ctx, fmt.Sprintf("pushing blob %s@%s", dst.Name, digest), func() error {
		return dst.PushBlob(ctx, digest, int64(len(data)), bytes.NewReader(data))
	})
}

// mergeWithTarget reads what tag holds at the target and merges it into the
// release's signature manifest n; nil means the target holds no signature
// the release lacks (or nothing mergeable), so the release's is written.
func (w *writer) mergeWithTarget(ctx context.Context, dst *registry.Repository, tag string, n *Node) (*mergedSignatures, error) {
	theirs, _, err := dst.GetManifest(ctx, tag)
	if err != nil {
		return nil, fmt.Errorf("reading %s:%s: %w", dst.Name, tag, err)
	}
	ours := signatureManifest{raw: n.Raw}
	if err := ours.decode(); err != nil {
		return nil, fmt.Errorf("the release's %s@%s: %w", n.Repository, n.Digest, err)
	}
	other := signatureManifest{raw: theirs}
	if other.decode() != nil || !other.hasExtraLayers(ours) {
		// Not a cosign signature manifest, or nothing to keep: it
		// holds no signature cosign would read, and the release's
		// replaces it (reported as moved).
		return nil, nil
	}
	if ours.configJSON, err = w.smallBlob(ctx, dst, ours.configDigest); err != nil {
		return nil, err
	}
	if other.configJSON, err = w.smallBlob(ctx, dst, other.configDigest); err != nil {
		return nil, err
	}
	m, err := mergeSignatureManifests(ours, other)
	if err != nil {
		return nil, err
	}
	// The same layers in the same order: what cosign wrote is kept as it
	// is rather than re-encoded.
	m.unchanged = slices.Equal(m.digests, other.digests)
	return m, nil
}

func (w *writer) smallBlob(ctx context.Context, dst *registry.Repository, digest string) ([]byte, error) {
	rc, _, err := dst.GetBlob(ctx, digest)
	if err != nil {
		return nil, fmt.Errorf("reading config %s@%s: %w", dst.Name, digest, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxSignatureConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading config %s@%s: %w", dst.Name, digest, err)
	}
	if len(b) > maxSignatureConfigBytes {
		return nil, fmt.Errorf("config %s@%s is larger than %d bytes", dst.Name, digest, maxSignatureConfigBytes)
	}
	if got := registry.Digest(b); got != digest {
		return nil, fmt.Errorf("%w: config %s@%s: content has digest %s", trust.ErrUntrusted, dst.Name, digest, got)
	}
	return b, nil
}

// signatureManifest is a cosign tag-format signature (or attestation)
// manifest: an image manifest whose layers are the signatures. Fields are
// kept raw, so nothing cosign wrote (annotations carrying the signature,
// the certificate, the bundle) is re-encoded.
type signatureManifest struct {
	raw          []byte
	fields       map[string]json.RawMessage
	layers       []json.RawMessage
	digests      []string
	configDigest string
	configJSON   []byte
}

func (s *signatureManifest) decode() error {
	if err := json.Unmarshal(s.raw, &s.fields); err != nil {
		return fmt.Errorf("decoding the manifest: %w", err)
	}
	if _, isIndex := s.fields["manifests"]; isIndex {
		return errors.New("an index, not a signature manifest")
	}
	var cfg descriptor
	if err := json.Unmarshal(s.fields["config"], &cfg); err != nil || !validDigest(cfg.Digest) {
		return errors.New("no valid config")
	}
	s.configDigest = cfg.Digest
	if err := json.Unmarshal(s.fields["layers"], &s.layers); err != nil || len(s.layers) == 0 {
		return errors.New("no layers")
	}
	if len(s.layers) > maxSignatureLayers {
		return fmt.Errorf("%d layers, more than %d", len(s.layers), maxSignatureLayers)
	}
	for i, l := range s.layers {
		var d descriptor
		if err := json.Unmarshal(l, &d); err != nil || !validDigest(d.Digest) {
			return fmt.Errorf("layer %d has no valid digest", i)
		}
		s.digests = append(s.digests, d.Digest)
	}
	return nil
}

func (s *signatureManifest) hasExtraLayers(ours signatureManifest) bool {
	have := map[string]bool{}
	for _, d := range ours.digests {
		have[d] = true
	}
	for _, d := range s.digests {
		if !have[d] {
			return true
		}
	}
	return false
}

// mergedSignatures is a signature manifest with the release's layers and
// the target's others, and the config it needs.
type mergedSignatures struct {
	manifest     []byte
	config       []byte
	configDigest string
	kept         []string
	// digests are the layers' digests, in order; unchanged means the
	// target already holds these layers in this order.
	digests   []string
	unchanged bool
}

// signatureConfig is the image config of a signature manifest: cosign
// writes one whose rootfs.diff_ids (and history) follow the layers, which
// registries and `crane validate` check.
type signatureConfig struct {
	fields  map[string]json.RawMessage
	rootFS  map[string]json.RawMessage
	diffIDs []string
	history []json.RawMessage
}

func parseSignatureConfig(b []byte) (signatureConfig, error) {
	c := signatureConfig{}
	if err := json.Unmarshal(b, &c.fields); err != nil {
		return c, fmt.Errorf("decoding the signature config: %w", err)
	}
	if raw, ok := c.fields["rootfs"]; ok {
		if err := json.Unmarshal(raw, &c.rootFS); err != nil {
			return c, fmt.Errorf("decoding the signature config's rootfs: %w", err)
		}
		if raw, ok := c.rootFS["diff_ids"]; ok {
			if err := json.Unmarshal(raw, &c.diffIDs); err != nil {
				return c, fmt.Errorf("decoding the signature config's diff_ids: %w", err)
			}
		}
	}
	if raw, ok := c.fields["history"]; ok {
		if err := json.Unmarshal(raw, &c.history); err != nil {
			return c, fmt.Errorf("decoding the signature config's history: %w", err)
		}
	}
	return c, nil
}

// mergeSignatureManifests is the union of ours' and theirs' layers,
// de-duplicated by digest, ours first and in order, then theirs in their
// order; the manifest is otherwise ours. It decides and writes nothing.
func mergeSignatureManifests(ours, theirs signatureManifest) (*mergedSignatures, error) {
	oc, err := parseSignatureConfig(ours.configJSON)
	if err != nil {
		return nil, fmt.Errorf("the release's: %w", err)
	}
	tc, err := parseSignatureConfig(theirs.configJSON)
	if err != nil {
		return nil, fmt.Errorf("the target's: %w", err)
	}
	var (
		layers  []json.RawMessage
		diffIDs []string
		history []json.RawMessage
		kept    []string
	)
	keepHistory := len(oc.history) == len(ours.layers) && len(tc.history) == len(theirs.layers)
	seen := map[string]bool{}
	add := func(m signatureManifest, c signatureConfig, i int, theirsSide bool) {
		d := m.digests[i]
		if seen[d] {
			return
		}
		seen[d] = true
		layers = append(layers, m.layers[i])
		// Signature layers are stored uncompressed, so a layer whose
		// config does not say otherwise has its digest as diff ID.
		diffID := d
		if len(c.diffIDs) == len(m.layers) {
			diffID = c.diffIDs[i]
		}
		diffIDs = append(diffIDs, diffID)
		if keepHistory {
			history = append(history, c.history[i])
		}
		if theirsSide {
			kept = append(kept, d)
		}
	}
	for i := range ours.layers {
		add(ours, oc, i, false)
	}
	for i := range theirs.layers {
		add(theirs, tc, i, true)
	}
	if len(layers) > maxSignatureLayers {
		return nil, fmt.Errorf("merged, the signatures would have %d layers, more than %d", len(layers), maxSignatureLayers)
	}
	if oc.rootFS == nil {
		oc.rootFS = map[string]json.RawMessage{"type": json.RawMessage(`"layers"`)}
	}
	var rawIDs json.RawMessage
	if rawIDs, err = marshal(diffIDs); err != nil {
		return nil, err
	}
	oc.rootFS["diff_ids"] = rawIDs
	if oc.fields["rootfs"], err = marshal(oc.rootFS); err != nil {
		return nil, err
	}
	delete(oc.fields, "history")
	if keepHistory {
		if oc.fields["history"], err = marshal(history); err != nil {
			return nil, err
		}
	}
	config, err := marshal(oc.fields)
	if err != nil {
		return nil, fmt.Errorf("encoding the merged signature config: %w", err)
	}
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal(ours.fields["config"], &cfg); err != nil {
		return nil, fmt.Errorf("decoding the release's config descriptor: %w", err)
	}
	m := &mergedSignatures{config: config, configDigest: registry.Digest(config), kept: kept}
	for _, l := range layers {
		var d descriptor
		_ = json.Unmarshal(l, &d) // decoded before, by decode
		m.digests = append(m.digests, d.Digest)
	}
	if cfg["digest"], err = marshal(m.configDigest); err != nil {
		return nil, err
	}
	if cfg["size"], err = marshal(len(config)); err != nil {
		return nil, err
	}
	fields := map[string]json.RawMessage{}
	for k, v := range ours.fields {
		fields[k] = v
	}
	if fields["config"], err = marshal(cfg); err != nil {
		return nil, err
	}
	if fields["layers"], err = marshal(layers); err != nil {
		return nil, err
	}
	if m.manifest, err = marshal(fields); err != nil {
		return nil, fmt.Errorf("encoding the merged signature manifest: %w", err)
	}
	return m, nil
}

// marshal encodes without HTML escaping, so the signatures' annotations are
// written as cosign wrote them.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
