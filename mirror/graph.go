package mirror

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
)

// Source is where a release is read from: a registry or an archive. repo is
// always the repository the lock names; the source maps it to its own layout.
type Source interface {
	// Manifest returns the bytes of the manifest with this digest; an
	// implementation checks them against the digest before returning.
	Manifest(ctx context.Context, repo, digest string) ([]byte, error)
	// Blob opens a blob for streaming; the caller checks its digest.
	Blob(ctx context.Context, repo, digest string) (io.ReadCloser, int64, error)
	// String names the source in messages.
	String() string
}

// Blob is a layer or config a manifest references.
type Blob struct {
	Digest    string `json:"digest"`
	Size      int64  `json:"size"`
	MediaType string `json:"mediaType"`
}

// Node is one manifest of the release.
type Node struct {
	// Repository is the repository the lock names for this manifest.
	Repository   string
	Digest       string
	MediaType    string
	Size         int64
	Raw          []byte
	Index        bool
	Children     []string
	Blobs        []Blob
	Subject      string
	ArtifactType string
	Annotations  map[string]string
	// Artifact is the lock's entry, nil for a manifest only reached
	// through an index (pinned by its parent's digest).
	Artifact *release.Artifact
	depth    int
}

// Tag is the tag the lock publishes this manifest under, if any.
func (n *Node) Tag() string {
	if n.Artifact == nil {
		return ""
	}
	return n.Artifact.Tag
}

// Graph is every manifest of a release, in an order a registry accepts:
// what a manifest depends on (its children, its subject) comes before it.
type Graph struct {
	Lock  *release.Lock
	Nodes []*Node
	byKey map[string]*Node
}

// Node returns the manifest digest of repo, or nil.
func (g *Graph) Node(repo, digest string) *Node { return g.byKey[repo+"@"+digest] }

// Blobs returns each distinct (repository, blob) pair with its size.
func (g *Graph) Blobs() []RepoBlob {
	seen := map[string]bool{}
	var out []RepoBlob
	for _, n := range g.Nodes {
		for _, b := range n.Blobs {
			k := n.Repository + "@" + b.Digest
			if !seen[k] {
				seen[k] = true
				out = append(out, RepoBlob{Repository: n.Repository, Blob: b})
			}
		}
	}
	return out
}

// RepoBlob is a blob as stored in one repository.
type RepoBlob struct {
	Repository string
	Blob
}

// UniqueBytes is the size of the distinct blobs and manifests, counting a
// blob shared by repositories once: what an archive holds.
func (g *Graph) UniqueBytes() int64 {
	seen := map[string]bool{}
	var total int64
	for _, n := range g.Nodes {
		if !seen[n.Digest] {
			seen[n.Digest] = true
			total += n.Size
		}
		for _, b := range n.Blobs {
			if !seen[b.Digest] {
				seen[b.Digest] = true
				total += b.Size
			}
		}
	}
	return total
}

// manifestDoc is the union of the image manifest and index fields a mirror
// needs; unknown fields are kept in Raw, never re-encoded.
type manifestDoc struct {
	MediaType    string            `json:"mediaType"`
	ArtifactType string            `json:"artifactType"`
	Config       *descriptor       `json:"config"`
	Layers       []descriptor      `json:"layers"`
	Manifests    []descriptor      `json:"manifests"`
	Blobs        []descriptor      `json:"blobs"`
	Subject      *descriptor       `json:"subject"`
	Annotations  map[string]string `json:"annotations"`
}

type descriptor struct {
	MediaType    string            `json:"mediaType"`
	Digest       string            `json:"digest"`
	Size         int64             `json:"size"`
	ArtifactType string            `json:"artifactType,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
}

// BuildGraph fetches every manifest the lock lists (and the platform manifests
// their indexes reference) from src, checking each against its digest, size
// and media type. It reads no blob.
func BuildGraph(ctx context.Context, l *release.Lock, src Source) (*Graph, error) {
	g := &Graph{Lock: l, byKey: map[string]*Node{}}
	if n := parallelReads(src); n > 1 {
		src = readManifestsAhead(ctx, l, src, n)
	}
	for i := range l.Artifacts {
		a := &l.Artifacts[i]
		if _, err := g.add(ctx, src, a.Repository, a.Digest, a.MediaType, a.Size, a); err != nil {
			return nil, err
		}
	}
	for _, n := range g.Nodes {
		if n.Subject != "" && g.Node(n.Repository, n.Subject) == nil {
			return nil, fmt.Errorf("%w: %s@%s refers to subject %s, which the release does not hold in that repository", trust.ErrUntrusted, n.Repository, n.Digest, n.Subject)
		}
	}
	for _, n := range g.Nodes {
		g.depthOf(n, 0)
	}
	sort.SliceStable(g.Nodes, func(i, j int) bool { return g.Nodes[i].depth < g.Nodes[j].depth })
	return g, nil
}

func (g *Graph) depthOf(n *Node, guard int) int {
	if n.depth > 0 || guard > 64 {
		return n.depth
	}
	d := 0
	deps := append([]string(nil), n.Children...)
	if n.Subject != "" {
		deps = append(deps, n.Subject)
	}
	for _, c := range deps {
		if cn := g.Node(n.Repository, c); cn != nil {
			if cd := g.depthOf(cn, guard+1); cd > d {
				d = cd
			}
		}
	}
	n.depth = d + 1
	return n.depth
}

// add fetches a manifest by digest, checks that its content has that digest
// and records it with its children. It stays whole: every check a fetched
// manifest must pass, in one place, before it enters the graph.
func (g *Graph) add(ctx context.Context, src Source, repo, digest, mediaType string, size int64, a *release.Artifact) (*Node, error) {
	if n := g.Node(repo, digest); n != nil {
		if a != nil && n.Artifact == nil {
			n.Artifact = a
		}
		return n, nil
	}
	raw, err := src.Manifest(ctx, repo, digest)
	if err != nil {
		return nil, fmt.Errorf("fetching manifest %s@%s from %s: %w", repo, digest, src, err)
	}
	if got := registry.Digest(raw); got != digest {
		return nil, fmt.Errorf("%w: manifest %s@%s: content has digest %s: the digest would change", trust.ErrUntrusted, repo, digest, got)
	}
	if size > 0 && int64(len(raw)) != size {
		return nil, fmt.Errorf("%w: manifest %s@%s: %d bytes, the lock says %d", trust.ErrUntrusted, repo, digest, len(raw), size)
	}
	var doc manifestDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("decoding manifest %s@%s: %w", repo, digest, err)
	}
	if doc.MediaType != "" && mediaType != "" && doc.MediaType != mediaType {
		return nil, fmt.Errorf("%w: manifest %s@%s is a %s, the lock says %s", trust.ErrUntrusted, repo, digest, doc.MediaType, mediaType)
	}
	mt := doc.MediaType
	if mt == "" {
		mt = mediaType
	}
	if mt == "" {
		return nil, fmt.Errorf("manifest %s@%s declares no media type", repo, digest)
	}
	n := &Node{
		Repository: repo, Digest: digest, MediaType: mt, Size: int64(len(raw)), Raw: raw,
		ArtifactType: doc.ArtifactType, Annotations: doc.Annotations, Artifact: a,
		Index: doc.Manifests != nil,
	}
	if doc.Subject != nil {
		n.Subject = doc.Subject.Digest
	}
	if n.ArtifactType == "" && doc.Config != nil && n.Subject != "" {
		// The referrers API reports the config media type when a
		// manifest has no artifactType; the fallback index must too.
		n.ArtifactType = doc.Config.MediaType
	}
	if doc.Config != nil {
		n.Blobs = append(n.Blobs, Blob{Digest: doc.Config.Digest, Size: doc.Config.Size, MediaType: doc.Config.MediaType})
	}
	for _, l := range append(doc.Layers, doc.Blobs...) {
		n.Blobs = append(n.Blobs, Blob{Digest: l.Digest, Size: l.Size, MediaType: l.MediaType})
	}
	for _, b := range n.Blobs {
		if !validDigest(b.Digest) || b.Size < 0 {
			return nil, fmt.Errorf("manifest %s@%s references an invalid blob %q", repo, digest, b.Digest)
		}
	}
	g.byKey[repo+"@"+digest] = n
	g.Nodes = append(g.Nodes, n)
	for _, c := range doc.Manifests {
		if !validDigest(c.Digest) {
			return nil, fmt.Errorf("index %s@%s references an invalid manifest %q", repo, digest, c.Digest)
		}
		n.Children = append(n.Children, c.Digest)
		if _, err := g.add(ctx, src, repo, c.Digest, c.MediaType, c.Size, nil); err != nil {
			return nil, fmt.Errorf("platform manifest of %s@%s: %w", repo, digest, err)
		}
	}
	return n, nil
}

func validDigest(d string) bool {
	if len(d) != 71 || d[:7] != "sha256:" {
		return false
	}
	for _, c := range d[7:] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
