package image

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// OCI annotation keys we set on every manifest and index.
const (
	AnnotationSource   = "org.opencontainers.image.source"
	AnnotationRevision = "org.opencontainers.image.revision"
	AnnotationVersion  = "org.opencontainers.image.version"
	AnnotationLicenses = "org.opencontainers.image.licenses"
	AnnotationCreated  = "org.opencontainers.image.created"
	AnnotationTitle    = "org.opencontainers.image.title"
	AnnotationDesc     = "org.opencontainers.image.description"
	AnnotationVendor   = "org.opencontainers.image.vendor"
	// AnnotationBaseDigest/Name are the OCI keys naming a base image.
	AnnotationBaseDigest = "org.opencontainers.image.base.digest"
	AnnotationBaseName   = "org.opencontainers.image.base.name"
)

// Metadata describes the product; it becomes annotations and labels.
type Metadata struct {
	// Name is the image name, e.g. "reloader" or "reloader-ubi".
	Name        string
	Version     string
	Commit      string
	Source      string
	Licenses    string // SPDX expression, e.g. "Apache-2.0"
	Vendor      string
	Summary     string
	Description string
	// Created is the release time (SOURCE_DATE_EPOCH).
	Created time.Time
}

// Annotations are the OCI annotations for a manifest or index.
func (m Metadata) Annotations() map[string]string {
	return map[string]string{
		AnnotationSource:   m.Source,
		AnnotationRevision: m.Commit,
		AnnotationVersion:  m.Version,
		AnnotationLicenses: m.Licenses,
		AnnotationCreated:  m.Created.UTC().Format(time.RFC3339),
		AnnotationTitle:    m.Name,
		AnnotationDesc:     m.Summary,
		AnnotationVendor:   m.Vendor,
	}
}

// redHatLabels are the labels Red Hat's container certification requires
// (name, vendor, version, release, summary, description) plus the common
// Kubernetes display labels it recommends.
func (m Metadata) redHatLabels() map[string]string {
	return map[string]string{
		"name":                 m.Name,
		"vendor":               m.Vendor,
		"version":              m.Version,
		"release":              m.Commit,
		"summary":              m.Summary,
		"description":          m.Description,
		"maintainer":           m.Vendor,
		"url":                  m.Source,
		"io.k8s.display-name":  m.Name,
		"io.k8s.description":   m.Description,
		"com.redhat.component": m.Name,
	}
}

// Content is what goes into one platform image besides its base.
type Content struct {
	Platform v1.Platform
	// Binary is the controller for Platform; it lands at BinaryPath.
	Binary     []byte
	BinaryPath string
	// Licenses are license texts shipped under /licenses.
	Licenses []File
	// Env are KEY=value settings the image's environment adds, replacing
	// a base's setting of the same key (GODEBUG=fips140=only in the -fips
	// variants).
	Env []string
}

// Standard builds the scratch-based image of one platform: a rootfs layer
// (passwd, group, CA roots), the license layer and the binary layer, so an
// update of the binary alone leaves the other layers shared.
func Standard(meta Metadata, c Content) (v1.Image, error) {
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := assemble(base, meta, c, []File(RootFSFiles()), map[string]string{})
	if err != nil {
		return nil, fmt.Errorf("building %s for %s: %w", meta.Name, c.Platform.String(), err)
	}
	return img, nil
}

// UBI builds the image of one platform on a UBI base image, adding the
// binary and /licenses and the labels Red Hat certification expects.
// baseRef is the base's name@digest, recorded in the base annotations.
func UBI(base v1.Image, baseRef, baseDigest string, meta Metadata, c Content) (v1.Image, error) {
	mt, err := base.MediaType()
	if err != nil {
		return nil, fmt.Errorf("building %s for %s: reading the base image: %w", meta.Name, c.Platform.String(), err)
	}
	if mt != types.OCIManifestSchema1 && mt != types.DockerManifestSchema2 {
		return nil, fmt.Errorf("building %s for %s: base image has media type %s", meta.Name, c.Platform.String(), mt)
	}
	// Our manifest is OCI whatever the base used; its layers keep their
	// media types, which OCI allows for Docker layers.
	base = mutate.MediaType(base, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := assemble(base, meta, c, nil, meta.redHatLabels())
	if err != nil {
		return nil, fmt.Errorf("building %s for %s: %w", meta.Name, c.Platform.String(), err)
	}
	ann := map[string]string{AnnotationBaseName: baseRef, AnnotationBaseDigest: baseDigest}
	return mutate.Annotations(img, ann).(v1.Image), nil
}

// assemble adds the layers and writes the config of one image. It stays
// whole because every field of the config it sets is one decision about
// what the container runs with (user, entrypoint, environment, labels), and
// reviewing them side by side is the point.
func assemble(base v1.Image, meta Metadata, c Content, rootfs []File, labels map[string]string) (v1.Image, error) {
	if len(c.Binary) == 0 || c.BinaryPath == "" {
		return nil, errors.New("no controller binary")
	}
	created := v1.Time{Time: meta.Created.UTC()}
	var adds []mutate.Addendum
	add := func(files []File, what string) error {
		if len(files) == 0 {
			return nil
		}
		l, err := Layer(files, meta.Created)
		if err != nil {
			return fmt.Errorf("%s layer: %w", what, err)
		}
		adds = append(adds, mutate.Addendum{Layer: l, MediaType: types.OCILayer,
			History: v1.History{Created: created, CreatedBy: "reloader-release: " + what, Comment: "built without a container runtime"}})
		return nil
	}
	if err := add(rootfs, "rootfs"); err != nil {
		return nil, err
	}
	if err := add(c.Licenses, "licenses"); err != nil {
		return nil, err
	}
	if err := add([]File{{Path: c.BinaryPath, Mode: 0o755, Data: c.Binary}}, "controller binary"); err != nil {
		return nil, err
	}
	img, err := mutate.Append(base, adds...)
	if err != nil {
		return nil, fmt.Errorf("appending layers: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = c.Platform.OS, c.Platform.Architecture, c.Platform.Variant
	cf.Created = created
	cf.Author = ""
	// A host-specific field a base may carry would make the config depend
	// on where the base was built; it means nothing for the controller.
	cf.Container = ""
	cf.Config.User = NonrootUser
	cf.Config.Entrypoint = []string{c.BinaryPath}
	cf.Config.Cmd = nil
	cf.Config.WorkingDir = "/"
	if len(rootfs) > 0 {
		cf.Config.Env = []string{"PATH=/", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}
	}
	cf.Config.Env = withEnv(cf.Config.Env, c.Env)
	all := map[string]string{}
	maps.Copy(all, cf.Config.Labels)
	maps.Copy(all, labels)
	maps.Copy(all, meta.Annotations())
	cf.Config.Labels = all
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("writing config: %w", err)
	}
	return mutate.Annotations(img, meta.Annotations()).(v1.Image), nil
}

// withEnv is env with each KEY=value of add set, replacing any setting of
// the same key: a base that set GODEBUG must not weaken the FIPS setting,
// and which of two settings of one key wins differs between readers.
func withEnv(env, add []string) []string {
	out := slices.Clone(env)
	for _, kv := range add {
		k, _, _ := strings.Cut(kv, "=")
		out = slices.DeleteFunc(out, func(e string) bool { return strings.HasPrefix(e, k+"=") })
		out = append(out, kv)
	}
	return out
}

// Index bundles the platform images of one variant into an OCI index.
func Index(meta Metadata, images []v1.Image) (v1.ImageIndex, error) {
	var adds []mutate.IndexAddendum
	for _, img := range images {
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, fmt.Errorf("building the %s index: %w", meta.Name, err)
		}
		p := cf.Platform()
		if p == nil {
			return nil, fmt.Errorf("building the %s index: an image has no platform", meta.Name)
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: p}})
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	idx = mutate.AppendManifests(idx, adds...)
	return mutate.Annotations(idx, meta.Annotations()).(v1.ImageIndex), nil
}

// SelectPlatform returns the image of index matching p exactly (variant
// included), for picking a child of a multi-platform base.
func SelectPlatform(index v1.ImageIndex, p v1.Platform) (v1.Image, v1.Hash, error) {
	im, err := index.IndexManifest()
	if err != nil {
		return nil, v1.Hash{}, fmt.Errorf("reading index: %w", err)
	}
	for _, d := range im.Manifests {
		if d.Platform == nil || d.Platform.OS != p.OS || d.Platform.Architecture != p.Architecture || d.Platform.Variant != p.Variant {
			continue
		}
		img, err := index.Image(d.Digest)
		if err != nil {
			return nil, v1.Hash{}, fmt.Errorf("reading the %s image %s: %w", p.String(), d.Digest, err)
		}
		return img, d.Digest, nil
	}
	return nil, v1.Hash{}, fmt.Errorf("index has no image for %s", p.String())
}
