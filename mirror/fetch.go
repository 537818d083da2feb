package mirror

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"golang.org/x/sync/errgroup"

	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
)

// A release is a few dozen small manifests and signature layers. Read one
// after another, each costs a round trip; read ahead concurrently, the
// checks that follow (BuildGraph's walk, the Verifier) run on bytes already
// here, in the same order and with the same errors as before.

// parallelReads is how many reads of src may overlap: a RegistrySource
// says; other sources (archives, which read local files) are read one at a
// time, as they always were.
func parallelReads(src Source) int {
	if p, ok := src.(interface{ parallelReads() int }); ok {
		return p.parallelReads()
	}
	return 1
}

// fetched is the outcome of one read ahead.
type fetched struct {
	raw []byte
	err error
}

// aheadSource serves the manifests read ahead, and reads any other from
// the source it wraps; errors are the source's own, so messages are those
// of a sequential read.
type aheadSource struct {
	Source
	manifests map[string]fetched
}

func (a *aheadSource) Manifest(ctx context.Context, repo, digest string) ([]byte, error) {
	if f, ok := a.manifests[repo+"@"+digest]; ok {
		return f.raw, f.err
	}
	return a.Source.Manifest(ctx, repo, digest)
}

type manifestRef struct{ repo, digest string }

// readManifestsAhead reads every manifest the lock lists, then the
// children of those (the platform manifests of an index), level by level,
// up to n at a time. It follows only the children of content that has the
// digest asked for, so a tampered index makes it read nothing it names.
func readManifestsAhead(ctx context.Context, l *release.Lock, src Source, n int) *aheadSource {
	ahead := &aheadSource{Source: src, manifests: map[string]fetched{}}
	var level []manifestRef
	seen := map[string]bool{}
	queue := func(r manifestRef) {
		if k := r.repo + "@" + r.digest; !seen[k] && validDigest(r.digest) {
			seen[k] = true
			level = append(level, r)
		}
	}
	for _, a := range l.Artifacts {
		queue(manifestRef{a.Repository, a.Digest})
	}
	for len(level) > 0 {
		results := readAll(ctx, n, level, func(ctx context.Context, r manifestRef) fetched {
			raw, err := src.Manifest(ctx, r.repo, r.digest)
			return fetched{raw, err}
		})
		this := level
		level = nil
		for i, r := range this {
			ahead.manifests[r.repo+"@"+r.digest] = results[i]
			if results[i].err != nil || registry.Digest(results[i].raw) != r.digest {
				continue
			}
			var doc struct {
				Manifests []descriptor `json:"manifests"`
			}
			if json.Unmarshal(results[i].raw, &doc) == nil {
				for _, c := range doc.Manifests {
					queue(manifestRef{r.repo, c.Digest})
				}
			}
		}
	}
	return ahead
}

// readAll runs read over items, up to n at a time, and returns the
// results in the items' order. A failed read does not stop the others: the
// caller meets the errors in its own order.
func readAll[T, R any](ctx context.Context, n int, items []T, read func(context.Context, T) R) []R {
	out := make([]R, len(items))
	var eg errgroup.Group
	eg.SetLimit(max(n, 1))
	for i, it := range items {
		eg.Go(func() error {
			out[i] = read(ctx, it)
			return nil
		})
	}
	_ = eg.Wait() // reads report through out
	return out
}

// maxAheadBlob is the largest signature layer read ahead: trust.Verifier
// refuses larger ones (4 MiB), and reads them itself to say so.
const maxAheadBlob = 4 << 20

// newGraphContent reads ahead, up to parallelReads(src) at a time, every
// layer of the lock's signatures and attestations: what the Verifier
// fetches through SmallBlob, one at a time, when it checks them.
func newGraphContent(ctx context.Context, g *Graph, src Source) graphContent {
	c := graphContent{g: g, src: src, blobs: map[string][]byte{}}
	if parallelReads(src) <= 1 {
		return c
	}
	refs := signatureLayers(g)
	results := readAll(ctx, parallelReads(src), refs, func(ctx context.Context, r manifestRef) fetched {
		b, err := readSmallBlob(ctx, src, r.repo, r.digest, maxAheadBlob)
		return fetched{b, err}
	})
	for i, r := range refs {
		// Only complete, digest-checked content is kept; anything else
		// is read again when asked for, and fails as it always did.
		if results[i].err == nil && len(results[i].raw) <= maxAheadBlob {
			c.blobs[r.repo+"@"+r.digest] = results[i].raw
		}
	}
	return c
}

// signatureLayers are the layers of the lock's signatures and attestations
// that the Verifier reads whole (up to maxAheadBlob each), once each.
func signatureLayers(g *Graph) []manifestRef {
	var refs []manifestRef
	seen := map[string]bool{}
	for _, n := range g.Nodes {
		if n.Artifact == nil || n.Artifact.Subject == "" || trust.Format(*n.Artifact) == "" {
			continue
		}
		var doc manifestDoc
		if json.Unmarshal(n.Raw, &doc) != nil {
			continue
		}
		for _, l := range doc.Layers {
			if k := n.Artifact.Repository + "@" + l.Digest; !seen[k] && validDigest(l.Digest) && l.Size <= maxAheadBlob {
				seen[k] = true
				refs = append(refs, manifestRef{n.Artifact.Repository, l.Digest})
			}
		}
	}
	return refs
}

// readSmallBlob reads at most max+1 bytes of a blob, checking its digest
// when it ends within them.
func readSmallBlob(ctx context.Context, src Source, repo, digest string, max int64) ([]byte, error) {
	rc, _, err := src.Blob(ctx, repo, digest)
	if err != nil {
		return nil, fmt.Errorf("fetching blob %s@%s: %w", repo, digest, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(NewVerifyingReader(rc, digest, -1), max+1))
	if err != nil {
		return nil, fmt.Errorf("reading blob %s@%s: %w", repo, digest, err)
	}
	return b, nil
}
