// Package chart packages Helm charts reproducibly and describes them as OCI
// artifacts in the layout `helm push` uses, so `helm pull oci://...` and
// `helm install oci://...@sha256:...` work on what we publish.
package chart

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/reloader-dev/reloader/publish/internal/artifact"
)

// Media types of a Helm chart stored in an OCI registry.
const (
	ConfigMediaType  = "application/vnd.cncf.helm.config.v1+json"
	ContentMediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// Options configures Package.
type Options struct {
	// Dir is the chart directory (with Chart.yaml).
	Dir string
	// Created stamps every file of the archive (SOURCE_DATE_EPOCH).
	Created time.Time
	// OutDir receives <name>-<version>.tgz.
	OutDir string
}

// Packaged is a packaged chart.
type Packaged struct {
	Name, Version, Description string
	// Library is a library chart: Helm cannot install it, so a release
	// does not publish it (it is packaged into the charts that use it).
	Library bool
	// Archive is the .tgz, byte-identical for identical input.
	Archive []byte
	Path    string
	// Config is the chart metadata as Helm stores it in the OCI config.
	Config  []byte
	Created time.Time
}

// Package loads, validates and packages the chart in opts.Dir. Helm's own
// packaging stamps files with the current time; the archive is rewritten
// with Created as every file's time and a fixed gzip header, keeping
// Helm's layout and .helmignore handling.
func Package(opts Options) (*Packaged, error) {
	c, err := loader.LoadDir(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("loading the chart %s: %w", opts.Dir, err)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("validating the chart %s: %w", opts.Dir, err)
	}
	tmp, err := os.MkdirTemp("", "chart-")
	if err != nil {
		return nil, fmt.Errorf("packaging the chart %s: %w", opts.Dir, err)
	}
	defer os.RemoveAll(tmp)
	saved, err := chartutil.Save(c, tmp)
	if err != nil {
		return nil, fmt.Errorf("packaging the chart %s: %w", opts.Dir, err)
	}
	raw, err := os.ReadFile(saved)
	if err != nil {
		return nil, fmt.Errorf("packaging the chart %s: %w", opts.Dir, err)
	}
	archive, err := normalize(raw, opts.Created)
	if err != nil {
		return nil, fmt.Errorf("packaging the chart %s: %w", opts.Dir, err)
	}
	cfg, err := json.Marshal(c.Metadata)
	if err != nil {
		return nil, fmt.Errorf("packaging the chart %s: %w", opts.Dir, err)
	}
	p := &Packaged{Name: c.Name(), Version: c.Metadata.Version, Description: c.Metadata.Description, Library: c.Metadata.Type == "library",
		Archive: archive, Config: cfg, Created: opts.Created}
	if opts.OutDir != "" {
		if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
			return nil, err
		}
		p.Path = filepath.Join(opts.OutDir, fmt.Sprintf("%s-%s.tgz", p.Name, p.Version))
		if err := os.WriteFile(p.Path, archive, 0o644); err != nil {
			return nil, fmt.Errorf("writing %s: %w", p.Path, err)
		}
	}
	return p, nil
}

func normalize(tgz []byte, mtime time.Time) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	var out bytes.Buffer
	zw, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		nh := &tar.Header{Typeflag: h.Typeflag, Name: h.Name, Mode: h.Mode, Size: int64(len(body)), ModTime: mtime.UTC(), Format: tar.FormatPAX}
		if err := tw.WriteHeader(nh); err != nil {
			return nil, err
		}
		if _, err := tw.Write(body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Artifact is the chart as an OCI artifact, as `helm push` lays it out.
func (p *Packaged) Artifact(source string) artifact.Artifact {
	return artifact.Artifact{
		Config: artifact.Blob{MediaType: ConfigMediaType, Data: p.Config},
		Layers: []artifact.Blob{{MediaType: ContentMediaType, Data: p.Archive}},
		Annotations: map[string]string{
			"org.opencontainers.image.title":       p.Name,
			"org.opencontainers.image.version":     p.Version,
			"org.opencontainers.image.description": p.Description,
			"org.opencontainers.image.source":      source,
			"org.opencontainers.image.created":     p.Created.UTC().Format(time.RFC3339),
		},
	}
}
