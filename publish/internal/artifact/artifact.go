// Package artifact writes non-image OCI artifacts (SBOM documents, Helm
// charts) as OCI 1.1 image manifests: explicit artifactType, typed config and
// layers, and an optional subject so registries with the referrers API list
// them next to the image they describe.
package artifact

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/reloader-dev/reloader/release"
)

// emptyConfig is the content of the OCI 1.1 empty descriptor
// (release.EmptyConfigMediaType), used when an artifact has no
// configuration of its own.
const emptyConfig = "{}"

// Blob is one piece of content with its media type.
type Blob struct {
	MediaType   string
	Data        []byte
	Annotations map[string]string
}

// Artifact is an OCI artifact to write.
type Artifact struct {
	ArtifactType string
	// Config is the config blob; zero means the empty descriptor.
	Config      Blob
	Layers      []Blob
	Annotations map[string]string
	// Subject is the manifest this artifact describes, if any.
	Subject *v1.Descriptor
}

type manifest struct {
	SchemaVersion int64             `json:"schemaVersion"`
	MediaType     types.MediaType   `json:"mediaType"`
	ArtifactType  string            `json:"artifactType,omitempty"`
	Config        v1.Descriptor     `json:"config"`
	Layers        []v1.Descriptor   `json:"layers"`
	Subject       *v1.Descriptor    `json:"subject,omitempty"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

func descriptor(b Blob) (v1.Descriptor, error) {
	h, _, err := v1.SHA256(bytes.NewReader(b.Data))
	if err != nil {
		return v1.Descriptor{}, err
	}
	return v1.Descriptor{MediaType: types.MediaType(b.MediaType), Size: int64(len(b.Data)), Digest: h, Annotations: b.Annotations}, nil
}

func (a Artifact) config() Blob {
	if a.Config.MediaType == "" {
		return Blob{MediaType: release.EmptyConfigMediaType, Data: []byte(emptyConfig)}
	}
	return a.Config
}

// Manifest returns the canonical manifest bytes: the same artifact always
// encodes to the same bytes, hence the same digest.
func (a Artifact) Manifest() ([]byte, error) {
	cfg, err := descriptor(a.config())
	if err != nil {
		return nil, fmt.Errorf("encoding the %s manifest: %w", a.ArtifactType, err)
	}
	m := manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1, ArtifactType: a.ArtifactType,
		Config: cfg, Layers: []v1.Descriptor{}, Subject: a.Subject, Annotations: a.Annotations}
	for _, l := range a.Layers {
		d, err := descriptor(l)
		if err != nil {
			return nil, fmt.Errorf("encoding the %s manifest: %w", a.ArtifactType, err)
		}
		m.Layers = append(m.Layers, d)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding the %s manifest: %w", a.ArtifactType, err)
	}
	return b, nil
}

type rawManifest []byte

func (r rawManifest) RawManifest() ([]byte, error)        { return r, nil }
func (r rawManifest) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }

// Push uploads the blobs and the manifest into repo, under tag if one is
// given or by digest only, and returns the manifest's descriptor.
func (a Artifact) Push(ctx context.Context, repo name.Repository, tag string, opts ...remote.Option) (v1.Descriptor, error) {
	raw, err := a.Manifest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	opts = append([]remote.Option{remote.WithContext(ctx)}, opts...)
	for _, b := range append([]Blob{a.config()}, a.Layers...) {
		l := static.NewLayer(b.Data, types.MediaType(b.MediaType))
		if err := remote.WriteLayer(repo, l, opts...); err != nil {
			return v1.Descriptor{}, fmt.Errorf("pushing a %s blob of the %s artifact to %s: %w", b.MediaType, a.ArtifactType, repo, err)
		}
	}
	h, size, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return v1.Descriptor{}, err
	}
	var target name.Reference = repo.Digest(h.String())
	if tag != "" {
		target = repo.Tag(tag)
	}
	if err := remote.Put(target, rawManifest(raw), opts...); err != nil {
		return v1.Descriptor{}, fmt.Errorf("pushing the %s manifest to %s: %w", a.ArtifactType, target, err)
	}
	return v1.Descriptor{MediaType: types.OCIManifestSchema1, Size: size, Digest: h, ArtifactType: a.ArtifactType}, nil
}
