package mirror

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release"
)

// The lock travels through registries as an OCI artifact (the contract is
// in package release): an empty config, the lock JSON and its Sigstore
// bundle as layers.
const maxLockArtifactLayer = 8 << 20

// LockArtifact is the lock packaged for a registry.
type LockArtifact struct {
	Manifest []byte
	Blobs    []LockBlob
}

// LockBlob is one blob of a LockArtifact.
type LockBlob struct {
	Digest string
	Data   []byte
}

// NewLockArtifact packages a lock and its bundle; the bytes are kept exactly.
func NewLockArtifact(lockJSON, bundleJSON []byte) (*LockArtifact, error) {
	empty := []byte("{}")
	desc := func(mt string, b []byte) descriptor {
		return descriptor{MediaType: mt, Digest: registry.Digest(b), Size: int64(len(b))}
	}
	m := struct {
		SchemaVersion int          `json:"schemaVersion"`
		MediaType     string       `json:"mediaType"`
		ArtifactType  string       `json:"artifactType"`
		Config        descriptor   `json:"config"`
		Layers        []descriptor `json:"layers"`
	}{2, release.LockManifestMediaType, release.LockArtifactType, desc(release.EmptyConfigMediaType, empty),
		[]descriptor{desc(release.LockArtifactType, lockJSON), desc(release.BundleMediaType, bundleJSON)}}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding the lock artifact: %w", err)
	}
	return &LockArtifact{Manifest: raw, Blobs: []LockBlob{
		{registry.Digest(empty), empty}, {registry.Digest(lockJSON), lockJSON}, {registry.Digest(bundleJSON), bundleJSON},
	}}, nil
}

// ParseLockArtifactManifest returns the digests of the lock and bundle
// layers of a lock artifact manifest, rejecting anything else.
func ParseLockArtifactManifest(raw []byte) (lock, bundle descriptor, err error) {
	var doc manifestDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return lock, bundle, fmt.Errorf("decoding the lock artifact manifest: %w", err)
	}
	if doc.ArtifactType != release.LockArtifactType {
		return lock, bundle, fmt.Errorf("artifact type is %q, not a release lock (%s)", doc.ArtifactType, release.LockArtifactType)
	}
	for _, l := range doc.Layers {
		if !validDigest(l.Digest) || l.Size <= 0 || l.Size > maxLockArtifactLayer {
			return lock, bundle, fmt.Errorf("lock artifact layer %q of %d bytes is not acceptable", l.Digest, l.Size)
		}
		switch l.MediaType {
		case release.LockArtifactType:
			if lock.Digest != "" {
				return lock, bundle, fmt.Errorf("lock artifact has two lock layers")
			}
			lock = l
		case release.BundleMediaType:
			if bundle.Digest != "" {
				return lock, bundle, fmt.Errorf("lock artifact has two bundle layers")
			}
			bundle = l
		}
	}
	if lock.Digest == "" || bundle.Digest == "" {
		return lock, bundle, fmt.Errorf("lock artifact lacks the lock or its signature bundle")
	}
	return lock, bundle, nil
}

// FetchLock reads a lock and its bundle from a registry reference
// ("host/repo:tag" or "host/repo@sha256:...").
func FetchLock(ctx context.Context, c *registry.Client, ref string) (lockJSON, bundleJSON []byte, err error) {
	repo, tag, err := splitRef(ref)
	if err != nil {
		return nil, nil, err
	}
	r, err := c.Repository(ctx, repo, false)
	if err != nil {
		return nil, nil, err
	}
	raw, _, err := r.GetManifest(ctx, tag)
	if err != nil {
		return nil, nil, fmt.Errorf("fetching the lock artifact %s: %w", ref, err)
	}
	ld, bd, err := ParseLockArtifactManifest(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("lock artifact %s: %w", ref, err)
	}
	read := func(d descriptor) ([]byte, error) {
		rc, _, err := r.GetBlob(ctx, d.Digest)
		if err != nil {
			return nil, fmt.Errorf("fetching %s of lock artifact %s: %w", d.Digest, ref, err)
		}
		defer rc.Close()
		return io.ReadAll(NewVerifyingReader(io.LimitReader(rc, d.Size+1), d.Digest, d.Size))
	}
	if lockJSON, err = read(ld); err != nil {
		return nil, nil, err
	}
	if bundleJSON, err = read(bd); err != nil {
		return nil, nil, err
	}
	return lockJSON, bundleJSON, nil
}

func splitRef(ref string) (repo, tagOrDigest string, err error) {
	if i := strings.IndexByte(ref, '@'); i > 0 {
		return ref[:i], ref[i+1:], nil
	}
	slash := strings.LastIndexByte(ref, '/')
	if i := strings.LastIndexByte(ref, ':'); i > slash && i > 0 {
		return ref[:i], ref[i+1:], nil
	}
	return "", "", fmt.Errorf("reference %q names no tag or digest", ref)
}
