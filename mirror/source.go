package mirror

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
)

// RegistrySource reads a release from registries, mapping each lock
// repository through Map (identity when nil).
type RegistrySource struct {
	Client *registry.Client
	Map    func(repo string) string
	Name   string
	// Concurrency bounds the reads of a release that overlap (0 means
	// 4): its manifests, level by level, and its signature layers.
	Concurrency int
}

func (s *RegistrySource) parallelReads() int {
	if s.Concurrency <= 0 {
		return 4
	}
	return s.Concurrency
}

func (s *RegistrySource) repo(ctx context.Context, repo string) (*registry.Repository, error) {
	if s.Map != nil {
		repo = s.Map(repo)
	}
	return s.Client.Repository(ctx, repo, false)
}

// Manifest implements Source.
func (s *RegistrySource) Manifest(ctx context.Context, repo, digest string) ([]byte, error) {
	r, err := s.repo(ctx, repo)
	if err != nil {
		return nil, err
	}
	b, _, err := r.GetManifest(ctx, digest)
	return b, err
}

// Blob implements Source.
func (s *RegistrySource) Blob(ctx context.Context, repo, digest string) (io.ReadCloser, int64, error) {
	r, err := s.repo(ctx, repo)
	if err != nil {
		return nil, 0, err
	}
	return r.GetBlob(ctx, digest)
}

func (s *RegistrySource) String() string {
	if s.Name != "" {
		return s.Name
	}
	return "registry"
}

// ErrDigestMismatch says content does not match the digest it was asked for.
var errDigestMismatch = fmt.Errorf("%w: content does not match its digest", trust.ErrUntrusted)

// IsDigestMismatch reports whether err is a content/digest disagreement,
// which no retry can fix.
func IsDigestMismatch(err error) bool { return errors.Is(err, errDigestMismatch) }

// VerifyingReader checks, as the last byte is read, that what was read has
// the expected digest and size; it fails the read otherwise, so a consumer
// streaming it (an upload) never completes with wrong content.
type VerifyingReader struct {
	r      io.Reader
	h      hash.Hash
	digest string
	size   int64
	n      int64
	failed error
}

// NewVerifyingReader wraps r; size < 0 means unknown.
func NewVerifyingReader(r io.Reader, digest string, size int64) *VerifyingReader {
	return &VerifyingReader{r: r, h: sha256.New(), digest: digest, size: size}
}

func (v *VerifyingReader) Read(p []byte) (int, error) {
	if v.failed != nil {
		return 0, v.failed
	}
	n, err := v.r.Read(p)
	v.n += int64(n)
	v.h.Write(p[:n])
	if v.size >= 0 && v.n > v.size {
		v.failed = fmt.Errorf("blob %s: more than the %d bytes expected: %w", v.digest, v.size, errDigestMismatch)
		return n, v.failed
	}
	if err == io.EOF {
		got := "sha256:" + hex.EncodeToString(v.h.Sum(nil))
		if v.size >= 0 && v.n != v.size {
			v.failed = fmt.Errorf("blob %s: %d bytes, expected %d: %w", v.digest, v.n, v.size, io.ErrUnexpectedEOF)
			return n, v.failed
		}
		if got != v.digest {
			v.failed = fmt.Errorf("blob %s: content has digest %s: %w", v.digest, got, errDigestMismatch)
			return n, v.failed
		}
	}
	return n, err
}

// Mismatch returns the digest error the reader found, if any.
func (v *VerifyingReader) Mismatch() error {
	if v.failed != nil && errors.Is(v.failed, errDigestMismatch) {
		return v.failed
	}
	return nil
}

// graphContent lets package verify read a release through a Graph (whose
// manifests are already digest-checked) and its Source.
type graphContent struct {
	g   *Graph
	src Source
	// blobs are signature layers read ahead (newGraphContent), by
	// repository@digest, each complete and digest-checked.
	blobs map[string][]byte
}

func (c graphContent) Manifest(_ context.Context, a release.Artifact) ([]byte, error) {
	n := c.g.Node(a.Repository, a.Digest)
	if n == nil {
		return nil, fmt.Errorf("manifest %s@%s is not part of the release", a.Repository, a.Digest)
	}
	return n.Raw, nil
}

// Parallel lets the Verifier check as many signatures at once as the source
// may be read at once: the layers are read ahead, and the Source is safe for
// concurrent use (blobs are copied concurrently from it too).
func (c graphContent) Parallel() int { return parallelReads(c.src) }

func (c graphContent) SmallBlob(ctx context.Context, a release.Artifact, digest string, max int64) ([]byte, error) {
	b, ok := c.blobs[a.Repository+"@"+digest]
	if !ok {
		var err error
		if b, err = readSmallBlob(ctx, c.src, a.Repository, digest, max); err != nil {
			return nil, err
		}
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("blob %s@%s is larger than the %d bytes a signature may be", a.Repository, digest, max)
	}
	return b, nil
}

// Mapping decides where each lock repository goes at the target: Target
// joined with the repository's path below the lock's common prefix
// ("ghcr.io/reloader-dev/charts/reloader" -> "<target>/charts/reloader"),
// unless Repos names it explicitly (by full name or by that relative path).
// This fits Harbor projects ("harbor.example/project/sub") and Artifactory
// repository keys ("artifactory.example/docker-local/path") alike.
type Mapping struct {
	Target string
	Repos  map[string]string
	prefix string
}

// NewMapping builds the mapping for the lock's repositories and refuses one
// that sends two repositories to the same place.
func NewMapping(target string, l *release.Lock, repos map[string]string) (*Mapping, error) {
	m := &Mapping{Target: strings.TrimSuffix(target, "/"), Repos: repos}
	var names []string
	seen := map[string]bool{}
	for _, a := range l.Artifacts {
		if !seen[a.Repository] {
			seen[a.Repository] = true
			names = append(names, a.Repository)
		}
	}
	sort.Strings(names)
	m.prefix = commonDir(names)
	dst := map[string]string{}
	for _, n := range names {
		t := m.Repository(n)
		if other, ok := dst[t]; ok {
			return nil, fmt.Errorf("repositories %s and %s would both go to %s: map one with --map", other, n, t)
		}
		dst[t] = n
	}
	return m, nil
}

// Repository maps one lock repository.
func (m *Mapping) Repository(repo string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(repo, m.prefix), "/")
	if rel == "" {
		rel = path.Base(repo)
	}
	if r, ok := m.Repos[repo]; ok {
		return r
	}
	if r, ok := m.Repos[rel]; ok {
		return r
	}
	return m.Target + "/" + rel
}

func commonDir(names []string) string {
	if len(names) == 0 {
		return ""
	}
	prefix := path.Dir(names[0])
	for _, n := range names[1:] {
		for prefix != "." && prefix != "/" && !strings.HasPrefix(n, prefix+"/") {
			prefix = path.Dir(prefix)
		}
	}
	if prefix == "." || prefix == "/" {
		return ""
	}
	return prefix
}
