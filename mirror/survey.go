package mirror

import (
	"context"
	"maps"
	"sync/atomic"

	"github.com/reloader-dev/reloader/mirror/registry"
)

// A re-run, or a mirror into a target that already holds most of a release
// (the previous version's base layers), spends most of its time asking the
// target what it has: a HEAD per blob and per manifest, a round trip each.
// Those questions need only the release's graph, not its verdict, and they
// write nothing, so VerifyToPush asks them while the signatures are being
// verified at the source, and Push starts from the answers.

// survey is what the target answered, asked while the release was verified.
type survey struct {
	target    string
	repos     map[string]string
	client    *registry.Client
	done      chan struct{}
	cancel    context.CancelFunc
	blobs     map[string]blobAnswer // by lock repository "@" digest
	manifests map[string]bool       // likewise
	used      atomic.Bool
}

// blobAnswer is one HEAD of a blob at the target.
type blobAnswer struct {
	exists bool
	size   int64
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
		blobs: map[string]blobAnswer{}, manifests: map[string]bool{}}
	m, err := NewMapping(opts.Target, g.Lock, opts.Repos)
	if err != nil {
		// Push reports the mapping's error itself.
		close(s.done)
		return s
	}
	go func() {
		defer close(s.done)
		w := &writer{opts: opts, m: m}
		// One pool for both kinds of question: no manifest waits for
		// the last blob's answer.
		blobs := g.Blobs()
		type answer struct {
			exists bool
			size   int64
			ok     bool
		}
		questions := make([]int, len(blobs)+len(g.Nodes))
		for i := range questions {
			questions[i] = i
		}
		answers := readAll(ctx, opts.Concurrency, questions, func(ctx context.Context, i int) answer {
			if i < len(blobs) {
				dst, err := w.repo(ctx, blobs[i].Repository)
				if err != nil {
					return answer{}
				}
				size, exists, err := dst.HeadBlob(ctx, blobs[i].Digest)
				return answer{exists, size, err == nil}
			}
			n := g.Nodes[i-len(blobs)]
			dst, err := w.repo(ctx, n.Repository)
			if err != nil {
				return answer{}
			}
			_, exists, err := dst.HeadManifest(ctx, n.Digest)
			return answer{exists, 0, err == nil}
		})
		for i, a := range answers {
			switch {
			case !a.ok:
			case i < len(blobs):
				s.blobs[blobs[i].Repository+"@"+blobs[i].Digest] = blobAnswer{a.exists, a.size}
			default:
				n := g.Nodes[i-len(blobs)]
				s.manifests[n.Repository+"@"+n.Digest] = a.exists
			}
		}
	}()
	return s
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
	exists, known = s.manifests[n.Repository+"@"+n.Digest]
	return exists, known
}
