package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/reloader-dev/reloader/publish/build"
)

// refNameAnnotation names an entry of an OCI layout's index.json.
const refNameAnnotation = "org.opencontainers.image.ref.name"

// writeLayout writes every index and, at the top level of index.json where
// a scanner selects them by digest, every platform image, into OutDir/oci.
// The gate scans this layout; the registry sees nothing yet.
func (r *run) writeLayout(context.Context) error {
	dir, err := filepath.Abs(filepath.Join(r.opts.OutDir, "oci"))
	if err != nil {
		return err
	}
	// A layout from an earlier run must not lend the gate other images.
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("clearing %s: %w", dir, err)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("creating the OCI layout %s: %w", dir, err)
	}
	for _, bi := range r.indexes {
		if err := p.AppendIndex(bi.idx, layout.WithAnnotations(map[string]string{refNameAnnotation: bi.name + ":" + r.opts.Version})); err != nil {
			return fmt.Errorf("writing %s to the OCI layout: %w", bi.name, err)
		}
	}
	for _, bi := range r.images {
		pl := bi.platform
		if err := p.AppendImage(bi.img, layout.WithPlatform(pl), layout.WithAnnotations(map[string]string{
			refNameAnnotation: bi.name + "-" + build.PlatformDir(bi.platform)})); err != nil {
			return fmt.Errorf("writing %s %s to the OCI layout: %w", bi.name, bi.platform.String(), err)
		}
	}
	r.layout = dir
	fmt.Fprintf(r.log, "    %d images in %s\n", len(r.images), dir)
	return nil
}
