package release

// The lock contract between the release pipeline and its consumers
// (reloader-mirror, reloader-release verify). Each fact is defined here once;
// a change is a change of the contract, for both sides at the same time.
const (
	// LockRepository is the repository, under the release's registry
	// prefix, that holds the lock artifact tagged with the version.
	LockRepository = "reloader-release"
	// LockArtifactType is the OCI artifactType of the lock artifact and the
	// media type of its lock layer.
	LockArtifactType = "application/vnd.reloader.release.lock.v1+json"
	// LockManifestMediaType is the media type of the lock artifact's
	// manifest.
	LockManifestMediaType = "application/vnd.oci.image.manifest.v1+json"
	// EmptyConfigMediaType is the config of artifacts that have none
	// (the lock artifact, bundle referrers).
	EmptyConfigMediaType = "application/vnd.oci.empty.v1+json"
	// BundleMediaType is the Sigstore bundle (v0.3 JSON): the lock's
	// signature, and the artifactType of keyless signature referrers.
	BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// PredicateCosignSign is the statement of a signature in a bundle, as
	// `cosign sign --new-bundle-format` writes it: a signature of the
	// subject itself, where any other predicate is an attestation about it.
	PredicateCosignSign = "https://sigstore.dev/cosign/sign/v1"
	// MaxManifestBytes bounds a manifest read into memory, from a registry
	// or an archive. It is far above the 4 MiB some tools cap at, because
	// large indexes and SBOM manifests exist, but still bounded so a hostile
	// registry or archive cannot exhaust memory.
	MaxManifestBytes = 64 << 20
)
