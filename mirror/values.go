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

// ImageValues are the chart values that pin one image variant by digest,
// and the chart that variant installs with.
type ImageValues struct {
	Variant    string `json:"variant"`
	Repository string `json:"repository"`
	Digest     string `json:"digest"`
	// Chart is the variant's chart at the target, "oci://repo@digest".
	Chart string `json:"chart"`
}

// Values is what a user needs to install the mirrored release.
type Values struct {
	Version string        `json:"version"`
	Images  []ImageValues `json:"images"`
	// Install is the helm command for each variant, pinned by digest.
	Install map[string]string `json:"install"`
	// YAML is the values file for each variant.
	YAML map[string]string `json:"yaml"`
}

// RenderValues computes digest-pinned values and install commands for every
// image variant of the release at the target.
func RenderValues(l *release.Lock, m *Mapping) (*Values, error) {
	v := &Values{Version: l.Version, Install: map[string]string{}, YAML: map[string]string{}}
	for _, idx := range l.Find(release.KindImageIndex, "") {
		c, err := VariantChart(l, idx)
		if err != nil {
			return nil, err
		}
		iv := ImageValues{Variant: idx.Variant, Repository: m.Repository(idx.Repository), Digest: idx.Digest,
			Chart: "oci://" + m.Repository(c.Repository) + "@" + c.Digest}
		v.Images = append(v.Images, iv)
		v.YAML[iv.Variant] = fmt.Sprintf("# Reloader %s (%s), pinned by digest\nimage:\n  repository: %s\n  tag: \"\"\n  digest: %s\n", l.Version, iv.Variant, iv.Repository, iv.Digest)
		v.Install[iv.Variant] = fmt.Sprintf("helm install reloader %s --set image.repository=%s --set image.digest=%s", iv.Chart, iv.Repository, iv.Digest)
	}
	if len(v.Images) == 0 {
		return nil, fmt.Errorf("release %s lists no image index", l.Version)
	}
	return v, nil
}

// VariantChart is the chart a variant's image installs with: the chart named
// as the image (reloader for the standard variant, reloader-ubi for ubi).
// A -fips variant installs with the chart of the variant it is built from
// (reloader-fips with reloader): the charts differ only in the default
// image, which the pinned values replace, and set nothing FIPS 140-only
// mode refuses. A library chart has no image of its name, so it is never
// chosen.
func VariantChart(l *release.Lock, idx release.Artifact) (release.Artifact, error) {
	want := idx.Name
	if idx.Variant == release.VariantFIPS || idx.Variant == release.VariantUBIFIPS {
		want = strings.TrimSuffix(idx.Name, "-fips")
	}
	var names []string
	for _, c := range l.Find(release.KindChart, "") {
		if c.Name == want {
			return c, nil
		}
		names = append(names, c.Name)
	}
	return release.Artifact{}, fmt.Errorf("release %s has no chart for the %s variant (image %s): want a chart named %q, the release has %q",
		l.Version, idx.Variant, idx.Name, want, names)
}

var digestKey = regexp.MustCompile(`(?m)^image:\s*\n(?:[ \t]+.*\n)*?[ \t]+digest:`)

// CheckChart reads each variant's chart from src and confirms its
// values.yaml has the image.digest key the rendered values set, so pinning
// cannot silently do nothing.
func CheckChart(ctx context.Context, l *release.Lock, g *Graph, src Source) error {
	for _, idx := range l.Find(release.KindImageIndex, "") {
		c, err := VariantChart(l, idx)
		if err != nil {
			return err
		}
		if err := checkChart(ctx, c, g, src); err != nil {
			return fmt.Errorf("chart %s (%s variant) %s: %w", c.Name, idx.Variant, c.Digest, err)
		}
	}
	return nil
}

func checkChart(ctx context.Context, c release.Artifact, g *Graph, src Source) error {
	n := g.Node(c.Repository, c.Digest)
	if n == nil {
		return errors.New("not in the release graph")
	}
	for _, b := range n.Blobs {
		if b.MediaType != "application/vnd.cncf.helm.chart.content.v1.tar+gzip" {
			continue
		}
		rc, _, err := src.Blob(ctx, c.Repository, b.Digest)
		if err != nil {
			return fmt.Errorf("fetching: %w", err)
		}
		defer rc.Close()
		values, err := chartValues(NewVerifyingReader(rc, b.Digest, b.Size))
		if err != nil {
			return err
		}
		if !digestKey.MatchString(values) {
			return errors.New("values.yaml has no image.digest: pinning by digest would be ignored")
		}
		return nil
	}
	return errors.New("no chart content layer")
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
