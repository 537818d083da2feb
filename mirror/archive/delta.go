package archive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Delta is the content of DeltaFile: what a delta archive leaves out
// because the release it is a delta against (Since) already holds it. It
// is not a trust anchor either: the importer uses it only to check, by
// HEAD requests, that the target holds what is left out before pushing
// anything; the full release is then verified as usual from the archive
// and the target together.
type Delta struct {
	Since DeltaBase `json:"since"`
	// Manifests and Blobs left out, each in the lock repository that
	// holds it (a registry stores content per repository).
	Manifests []Omitted `json:"manifests"`
	Blobs     []Omitted `json:"blobs"`
}

// DeltaBase names the release a delta is against.
type DeltaBase struct {
	Version string `json:"version"`
	// LockDigest is the sha256 of the base release's signed lock.
	LockDigest string `json:"lockDigest"`
}

// Omitted is one manifest or blob a delta leaves out.
type Omitted struct {
	Repository string `json:"repository"`
	Digest     string `json:"digest"`
	Size       int64  `json:"size"`
}

// maxDeltaEntries bounds what a delta may list, far above any release.
const maxDeltaEntries = 1 << 20

// Marshal encodes the delta.
func (d *Delta) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", DeltaFile, err)
	}
	return append(b, '\n'), nil
}

// ParseDelta reads DeltaFile strictly: known fields only, sha256 digests,
// repositories that are plain names, sizes not negative, nothing twice.
func ParseDelta(b []byte) (*Delta, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var d Delta
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, DeltaFile, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: %s: data after the document", ErrInvalid, DeltaFile)
	}
	if d.Since.Version == "" || strings.ContainsAny(d.Since.Version, " \t\r\n/") || len(d.Since.Version) > 128 {
		return nil, fmt.Errorf("%w: %s: since.version %q is not a release version", ErrInvalid, DeltaFile, d.Since.Version)
	}
	if !validDigest(d.Since.LockDigest) {
		return nil, fmt.Errorf("%w: %s: since.lockDigest %q is not a sha256 digest", ErrInvalid, DeltaFile, d.Since.LockDigest)
	}
	if len(d.Manifests)+len(d.Blobs) > maxDeltaEntries {
		return nil, fmt.Errorf("%w: %s lists more than %d entries", ErrInvalid, DeltaFile, maxDeltaEntries)
	}
	for kind, list := range map[string][]Omitted{"manifest": d.Manifests, "blob": d.Blobs} {
		seen := map[Omitted]bool{}
		for i, o := range list {
			if err := o.check(); err != nil {
				return nil, fmt.Errorf("%w: %s: %s %d: %w", ErrInvalid, DeltaFile, kind, i+1, err)
			}
			key := Omitted{Repository: o.Repository, Digest: o.Digest}
			if seen[key] {
				return nil, fmt.Errorf("%w: %s: %s %s@%s listed twice", ErrInvalid, DeltaFile, kind, o.Repository, o.Digest)
			}
			seen[key] = true
		}
	}
	return &d, nil
}

func (o Omitted) check() error {
	if !validDigest(o.Digest) {
		return fmt.Errorf("%q is not a sha256 digest", o.Digest)
	}
	if o.Size < 0 {
		return fmt.Errorf("%s: negative size", o.Digest)
	}
	if o.Repository == "" || len(o.Repository) > 512 || strings.ContainsAny(o.Repository, " \t\r\n@:\\") && !validRepoWithPort(o.Repository) {
		return fmt.Errorf("repository %q is not a repository name", o.Repository)
	}
	return nil
}

// validRepoWithPort accepts a registry host with a port
// ("127.0.0.1:5000/x/y"): the only place a colon may be in a repository.
func validRepoWithPort(repo string) bool {
	host, path, ok := strings.Cut(repo, "/")
	if !ok || path == "" || strings.ContainsAny(path, " \t\r\n@:\\") || strings.ContainsAny(host, " \t\r\n@\\") {
		return false
	}
	return strings.Count(host, ":") == 1
}

func validDigest(d string) bool {
	hexPart, ok := strings.CutPrefix(d, "sha256:")
	return ok && len(hexPart) == 64 && strings.Trim(hexPart, "0123456789abcdef") == ""
}
