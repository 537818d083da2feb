package mirror

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
)

// manifests pushes every manifest by digest, dependencies first (its
// children, its subject), so registries that check references
// (distribution, Harbor) accept each one, and no tag is touched. The
// manifests of one depth depend on none of each other: they go up to
// Concurrency at a time, and a depth starts only when the one before it is
// complete.
func (w *writer) manifests(ctx context.Context) error {
	w.opts.Progress.Phase("manifests", int64(len(w.g.Nodes)), false)
	defer w.opts.Progress.Done()
	for _, level := range depthLevels(w.g.Nodes) {
		eg, ectx := errgroup.WithContext(ctx)
		eg.SetLimit(w.opts.Concurrency)
		for _, n := range level {
			eg.Go(func() error { return w.manifest(ectx, n) })
		}
		if err := eg.Wait(); err != nil {
			return err
		}
	}
	return nil
}

// depthLevels splits nodes, sorted by depth (BuildGraph), into runs of one
// depth each.
func depthLevels(nodes []*Node) [][]*Node {
	var levels [][]*Node
	for i, n := range nodes {
		if i == 0 || n.depth != nodes[i-1].depth {
			levels = append(levels, nil)
		}
		levels[len(levels)-1] = append(levels[len(levels)-1], n)
	}
	return levels
}

func (w *writer) manifest(ctx context.Context, n *Node) error {
	dst, err := w.repo(ctx, n.Repository)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("pushing manifest %s@%s", dst.Name, n.Digest)
	exists, known := w.sv.manifest(n)
	if !known {
		if err := w.retry(ctx, what, func() (err error) { _, exists, err = dst.HeadManifest(ctx, n.Digest); return err }); err != nil {
			return err
		}
	}
	if !exists {
		if err := w.retry(ctx, what, func() error { _, err := dst.PutManifest(ctx, n.Digest, n.MediaType, n.Raw); return err }); err != nil {
			return err
		}
	}
	w.mu.Lock()
	if exists {
		w.stats.ManifestsPresent++
	} else {
		w.stats.ManifestsPushed++
	}
	w.mu.Unlock()
	w.opts.Progress.Add(1)
	return nil
}

// checkBlobs asks the target for every blob of the release, up to
// Concurrency at a time, after every manifest is there; the first missing
// one in graph order is reported, whatever order the answers came in.
func (w *writer) checkBlobs(ctx context.Context) error {
	errs := readAll(ctx, w.opts.Concurrency, w.g.Blobs(), func(ctx context.Context, rb RepoBlob) error {
		dst, err := w.repo(ctx, rb.Repository)
		if err != nil {
			return err
		}
		size, ok, err := dst.HeadBlob(ctx, rb.Digest)
		if err != nil {
			return fmt.Errorf("checking blob %s@%s: %w", dst.Name, rb.Digest, err)
		}
		if !ok || (size != 0 && size != rb.Size) {
			return fmt.Errorf("blob %s@%s is missing or has %d bytes, not %d", dst.Name, rb.Digest, size, rb.Size)
		}
		return nil
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
