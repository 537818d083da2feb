package mirror

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/reloader-dev/reloader/release"
)

// ImageValues are the chart values that pin one image variant by digest.
type ImageValues struct {
	Variant    string `json:"variant"`
	Repository string `json:"repository"`
	Digest     string `json:"digest"`
}

// Values is what a user needs to install the mirrored release.
type Values struct {
	Version string        `json:"version"`
	Chart   string        `json:"chart"`
	Images  []ImageValues `json:"images"`
	// Install is the helm command for each variant, pinned by digest.
	Install map[string]string `json:"install"`
	// YAML is the values file for each variant.
	YAML map[string]string `json:"yaml"`
}

// RenderValues computes digest-pinned values for both variants at the target.
func RenderValues(l *release.Lock, m *Mapping) (*Values, error) {
	charts := l.Find(release.KindChart, "")
	if len(charts) != 1 {
		return nil, fmt.Errorf("release %s lists %d charts, want 1", l.Version, len(charts))
	}
	c := charts[0]
	v := &Values{Version: l.Version, Chart: "oci://" + m.Repository(c.Repository) + "@" + c.Digest,
		Install: map[string]string{}, YAML: map[string]string{}}
	for _, idx := range l.Find(release.KindImageIndex, "") {
		iv := ImageValues{Variant: idx.Variant, Repository: m.Repository(idx.Repository), Digest: idx.Digest}
		v.Images = append(v.Images, iv)
		v.YAML[iv.Variant] = fmt.Sprintf("# Reloader %s (%s), pinned by digest\nimage:\n  repository: %s\n  tag: \"\"\n  digest: %s\n", l.Version, iv.Variant, iv.Repository, iv.Digest)
		v.Install[iv.Variant] = fmt.Sprintf("helm install reloader %s --set image.repository=%s --set image.digest=%s", v.Chart, iv.Repository, iv.Digest)
	}
	if len(v.Images) == 0 {
		return nil, fmt.Errorf("release %s lists no image index", l.Version)
	}
	return v, nil
}

var digestKey = regexp.MustCompile(`(?m)^image:\s*\n(?:[ \t]+.*\n)*?[ \t]+digest:`)

// CheckChart reads the chart from src and confirms its values.yaml has the
// image.digest key the rendered values set, so pinning cannot silently do
// nothing.
func CheckChart(ctx context.Context, l *release.Lock, g *Graph, src Source) error {
	for _, c := range l.Find(release.KindChart, "") {
		n := g.Node(c.Repository, c.Digest)
		if n == nil {
			return fmt.Errorf("chart %s is not in the release graph", c.Digest)
		}
		for _, b := range n.Blobs {
			if b.MediaType != "application/vnd.cncf.helm.chart.content.v1.tar+gzip" {
				continue
			}
			rc, _, err := src.Blob(ctx, c.Repository, b.Digest)
			if err != nil {
				return fmt.Errorf("fetching chart %s: %w", c.Digest, err)
			}
			defer rc.Close()
			values, err := chartValues(NewVerifyingReader(rc, b.Digest, b.Size))
			if err != nil {
				return fmt.Errorf("chart %s: %w", c.Digest, err)
			}
			if !digestKey.MatchString(values) {
				return fmt.Errorf("chart %s: values.yaml has no image.digest: pinning by digest would be ignored", c.Digest)
			}
			return nil
		}
	}
	return errors.New("the release's chart has no chart content layer")
}

func chartValues(r io.Reader) (string, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return "", fmt.Errorf("opening the chart archive: %w", err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			return "", fmt.Errorf("reading the chart archive for values.yaml: %w", err)
		}
		parts := strings.Split(h.Name, "/")
		if len(parts) == 2 && parts[1] == "values.yaml" {
			b, err := io.ReadAll(io.LimitReader(tr, 1<<20))
			return string(b), err
		}
	}
}
