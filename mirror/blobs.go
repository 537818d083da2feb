package mirror

import (
	"context"
	"fmt"
	"io"
	"sort"

	"golang.org/x/sync/errgroup"
)

func (w *writer) blobs(ctx context.Context) error {
	all := w.g.Blobs()
	var total int64
	for _, b := range all {
		total += b.Size
	}
	w.opts.Progress.Phase("blobs", total, true)
	defer w.opts.Progress.Done()
	// Blobs shared by repositories go to one repository first, so the
	// others can mount them instead of uploading again.
	sort.SliceStable(all, func(i, j int) bool { return all[i].Repository < all[j].Repository })
	return transferBlobs(ctx, w.opts.Concurrency, byDigest(all), w.blob)
}

// byDigest groups blobs by digest, in the order each digest first appears.
func byDigest(blobs []RepoBlob) [][]RepoBlob {
	index := map[string]int{}
	var groups [][]RepoBlob
	for _, b := range blobs {
		i, ok := index[b.Digest]
		if !ok {
			i = len(groups)
			index[b.Digest] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], b)
	}
	return groups
}

// transferBlobs runs fn over every blob, up to concurrency groups at a
// time. The blobs of one group (copies of one digest) go in order, so a
// later copy can reuse what the first one wrote.
func transferBlobs(ctx context.Context, concurrency int, groups [][]RepoBlob, fn func(context.Context, RepoBlob) error) error {
	eg, ectx := errgroup.WithContext(ctx)
	eg.SetLimit(concurrency)
	for _, copies := range groups {
		eg.Go(func() error {
			for _, rb := range copies {
				if err := fn(ectx, rb); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return eg.Wait()
}

// blob copies one blob to the target unless it is already there: a
// cross-repository mount first, then a streamed copy whose digest is
// checked. It stays whole because each step falls back to the next.
func (w *writer) blob(ctx context.Context, rb RepoBlob) error {
	dst, err := w.repo(ctx, rb.Repository)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("copying blob %s to %s", rb.Digest, dst.Name)
	a, known := w.sv.blob(rb)
	exists, size := a.exists, a.size
	if known && !exists {
		// Absent before the run, but an earlier copy of this digest may
		// have just been written: many registries keep one blob store,
		// so this repository may hold it now.
		w.mu.Lock()
		_, written := w.present[rb.Digest]
		w.mu.Unlock()
		known = !written
	}
	if !known {
		if err := w.retry(ctx, what, func() (err error) { size, exists, err = dst.HeadBlob(ctx, rb.Digest); return err }); err != nil {
			return err
		}
	}
	if exists && (size == rb.Size || size == 0) {
		w.mu.Lock()
		w.stats.BlobsPresent++
		w.present[rb.Digest] = dst.Path()
		w.mu.Unlock()
		w.opts.Progress.Add(rb.Size)
		return nil
	}
	w.mu.Lock()
	from := w.present[rb.Digest]
	w.mu.Unlock()
	if from != "" && from != dst.Path() {
		var mounted bool
		if err := w.retry(ctx, what, func() (err error) { mounted, err = dst.MountBlob(ctx, rb.Digest, from); return err }); err != nil {
			return err
		}
		if mounted {
			w.mu.Lock()
			w.stats.BlobsMounted++
			w.mu.Unlock()
			w.opts.Progress.Add(rb.Size)
			w.opts.Progress.Item("mounted "+dst.Name+"@"+rb.Digest+" from "+from, rb.Size)
			return nil
		}
	}
	err = w.retry(ctx, what, func() error {
		rc, _, err := w.rel.src.Blob(ctx, rb.Repository, rb.Digest)
		if err != nil {
			return err
		}
		defer rc.Close()
		vr := NewVerifyingReader(rc, rb.Digest, rb.Size)
		cr := &countingReader{r: vr, add: w.opts.Progress.Add}
		err = dst.PushBlob(ctx, rb.Digest, rb.Size, cr)
		if m := vr.Mismatch(); m != nil {
			return m
		}
		if err != nil {
			// What was sent of a failed upload is not progress.
			w.opts.Progress.Add(-cr.n)
			return err
		}
		w.bytes.Add(cr.n)
		return nil
	})
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.stats.BlobsPushed++
	w.stats.BytesPushed += rb.Size
	w.present[rb.Digest] = dst.Path()
	w.mu.Unlock()
	w.opts.Progress.Item("pushed "+dst.Name+"@"+rb.Digest, rb.Size)
	return nil
}

type countingReader struct {
	r   io.Reader
	n   int64
	add func(int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.add(int64(n))
	return n, err
}
