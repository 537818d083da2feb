package mirror

import (
	"bytes"
	"context"
	"io"
	"maps"
	"sync/atomic"

	"github.com/reloader-dev/reloader/mirror/registry"
)

// A re-run, or a mirror into a target that already holds most of a release
// (the previous version's base layers), spends most of its time asking the
// target what it has: a request per blob and per manifest, a round trip
// each. Those questions need only the release's graph, not its verdict, and
// they write nothing, so VerifyToPush asks them while the signatures are
// being verified at the source, and Push starts from the answers.
//
// The manifests and signature layers the target holds are read whole, not
// just asked for: the verification of the copy at the target (readBack)
// reads exactly those, and content under a digest cannot change, so what
// was there before Push needs no second read. What Push writes is read
// back after it, as always.

// survey is what the target answered, asked while the release was verified.
type survey struct {
	target string
	repos  map[string]string
	client *registry.Client
	done   chan struct{}
	cancel context.CancelFunc
	blobs  map[string]blobAnswer // by lock repository "@" digest
	// manifests holds the bytes (digest-checked) of each manifest the
	// target held, and nil for each it did not; rawBlobs the bytes of the
	// signature layers it held.
	manifests, rawBlobs map[string][]byte
	used                atomic.Bool
}

// blobAnswer is what the target said of one blob.
type blobAnswer struct {
	exists bool
	size   int64
}

// question is one thing asked of the target: a manifest, a signature
// layer (read whole) or any other blob (a HEAD).
type question struct {
	repo, digest string
	manifest     bool
	read         bool
}

// answer is the target's: ok is false when it did not answer (an error),
// raw holds what was read.
type answer struct {
	exists, ok bool
	size       int64
	raw        []byte
}

// startSurvey asks the target about every blob and manifest of g, up to
// opts.Concurrency at a time, in the background. A question that fails (a
// timeout, a 5xx) is left unanswered: Push asks it again, with retries, as
// it would have without a survey.
func startSurvey(ctx context.Context, g *Graph, opts PushOptions) *survey {
	opts.defaults()
	ctx, cancel := context.WithCancel(ctx)
	s := &survey{target: opts.Target, repos: maps.Clone(opts.Repos), client: opts.Client,
		done: make(chan struct{}), cancel: cancel,
		blobs: map[string]blobAnswer{}, manifests: map[string][]byte{}, rawBlobs: map[string][]byte{}}
	m, err := NewMapping(opts.Target, g.Lock, opts.Repos)
	if err != nil {
		// Push reports the mapping's error itself.
		close(s.done)
		return s
	}
	// One pool for every question: no manifest waits for the last
	// blob's answer.
	read := map[string]bool{}
	for _, r := range signatureLayers(g) {
		read[r.repo+"@"+r.digest] = true
	}
	var qs []question
	for _, b := range g.Blobs() {
		qs = append(qs, question{repo: b.Repository, digest: b.Digest, read: read[b.Repository+"@"+b.Digest]})
	}
	for _, n := range g.Nodes {
		qs = append(qs, question{repo: n.Repository, digest: n.Digest, manifest: true})
	}
	tsrc := &RegistrySource{Client: opts.Client, Map: m.Repository}
	go func() {
		defer close(s.done)
		answers := readAll(ctx, opts.Concurrency, qs, func(ctx context.Context, q question) answer {
			return s.ask(ctx, tsrc, q)
		})
		for i, a := range answers {
			q, k := qs[i], qs[i].repo+"@"+qs[i].digest
			switch {
			case !a.ok:
			case q.manifest:
				s.manifests[k] = a.raw
			default:
				s.blobs[k] = blobAnswer{a.exists, a.size}
				if a.raw != nil {
					s.rawBlobs[k] = a.raw
				}
			}
		}
	}()
	return s
}

// ask puts one question to the target.
func (s *survey) ask(ctx context.Context, tsrc *RegistrySource, q question) answer {
	switch {
	case q.manifest:
		raw, err := tsrc.Manifest(ctx, q.repo, q.digest)
		if registry.IsNotFound(err) {
			return answer{ok: true}
		}
		return answer{exists: err == nil, ok: err == nil, raw: raw}
	case q.read:
		raw, err := readSmallBlob(ctx, tsrc, q.repo, q.digest, maxAheadBlob)
		if registry.IsNotFound(err) {
			return answer{ok: true}
		}
		if err != nil || len(raw) > maxAheadBlob {
			return answer{}
		}
		return answer{exists: true, ok: true, size: int64(len(raw)), raw: raw}
	}
	dst, err := tsrc.repo(ctx, q.repo)
	if err != nil {
		return answer{}
	}
	size, exists, err := dst.HeadBlob(ctx, q.digest)
	return answer{exists: exists, ok: err == nil, size: size}
}

// surveyedTarget is the target as readBack reads it: the manifests and
// signature layers the survey read are served from memory (what the
// target held before Push, by digest), the rest read from the target.
type surveyedTarget struct {
	*RegistrySource
	s *survey
}

func (t surveyedTarget) Manifest(ctx context.Context, repo, digest string) ([]byte, error) {
	if raw := t.s.manifests[repo+"@"+digest]; raw != nil {
		return raw, nil
	}
	return t.RegistrySource.Manifest(ctx, repo, digest)
}

func (t surveyedTarget) Blob(ctx context.Context, repo, digest string) (io.ReadCloser, int64, error) {
	if raw, ok := t.s.rawBlobs[repo+"@"+digest]; ok {
		return io.NopCloser(bytes.NewReader(raw)), int64(len(raw)), nil
	}
	return t.RegistrySource.Blob(ctx, repo, digest)
}

// stop abandons the survey and waits until it has stopped asking.
func (s *survey) stop() {
	s.cancel()
	<-s.done
}

// answersFor waits for the survey and returns it if it asked the target
// opts describe, nil if it asked another (a Release pushed somewhere else
// than VerifyToPush was told) or was used before: a second Push of the same
// Release asks the target again, since the first changed what it holds.
func (s *survey) answersFor(ctx context.Context, opts PushOptions) (*survey, error) {
	if s == nil {
		return nil, nil
	}
	select {
	case <-s.done:
	case <-ctx.Done():
		s.stop()
		return nil, ctx.Err()
	}
	s.cancel()
	if s.used.Swap(true) || s.target != opts.Target || !maps.Equal(s.repos, opts.Repos) || s.client != opts.Client {
		return nil, nil
	}
	return s, nil
}

// blob is the survey's answer for one blob, if it has one.
func (s *survey) blob(rb RepoBlob) (blobAnswer, bool) {
	if s == nil {
		return blobAnswer{}, false
	}
	a, ok := s.blobs[rb.Repository+"@"+rb.Digest]
	return a, ok
}

// manifest is the survey's answer for one manifest, if it has one.
func (s *survey) manifest(n *Node) (exists, known bool) {
	if s == nil {
		return false, false
	}
	raw, known := s.manifests[n.Repository+"@"+n.Digest]
	return raw != nil, known
}
