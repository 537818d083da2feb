package registry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
)

// Accepted is every manifest media type a mirror may meet; registries serve
// the stored bytes unchanged when the stored type is in the list.
var accepted = strings.Join([]string{
	string(types.OCIImageIndex),
	string(types.OCIManifestSchema1),
	string(types.DockerManifestList),
	string(types.DockerManifestSchema2),
	"application/vnd.oci.artifact.manifest.v1+json",
}, ", ")

// Repository is one repository of one registry.
type Repository struct {
	// Name is "host/path" as given.
	Name      string
	path      string
	host      string
	base      string
	hc        *http.Client
	userAgent string
	// user is the user name the credentials carry, for error messages.
	user string
}

// Host is the registry part of the repository name.
func (r *Repository) Host() string { return r.host }

// Path is the repository path without the registry.
func (r *Repository) Path() string { return r.path }

func (r *Repository) url(kind, ref string) string {
	return r.base + "/v2/" + r.path + "/" + kind + "/" + ref
}

func (r *Repository) do(ctx context.Context, method, u string, body io.Reader, hdr map[string]string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("building %s %s: %w", method, u, err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	req.Header.Set("User-Agent", r.userAgent)
	resp, err := r.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, u, err)
	}
	return resp, nil
}

// errorFrom turns an unexpected answer into an error; a refusal of access
// becomes a DeniedError naming this repository and right, the operation's
// need ("pull" or "push").
func (r *Repository) errorFrom(resp *http.Response, right string) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		// A 401 with a Basic challenge refuses the credentials; a Bearer
		// one says the token (issued for what the user holds) falls short.
		rejected := resp.StatusCode == http.StatusUnauthorized &&
			strings.HasPrefix(strings.ToLower(resp.Header.Get("WWW-Authenticate")), "basic")
		return &DeniedError{Registry: r.host, Repository: r.path, Right: right, User: r.user, Rejected: rejected && r.user != "",
			Status: resp.StatusCode, Detail: string(b)}
	}
	return &Error{Method: resp.Request.Method, URL: resp.Request.URL.Redacted(), Status: resp.StatusCode, Body: string(b)}
}

// Descriptor is what a registry says about a manifest or blob.
type Descriptor struct {
	MediaType string
	Digest    string
	Size      int64
}

// HeadManifest tells whether ref (a tag or digest) exists. A 403 on a tag is
// taken as absent: Artifactory answers a missing tag that way.
func (r *Repository) HeadManifest(ctx context.Context, ref string) (Descriptor, bool, error) {
	resp, err := r.do(ctx, http.MethodHead, r.url("manifests", ref), nil, map[string]string{"Accept": accepted})
	if err != nil {
		return Descriptor{}, false, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
		size, _ := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64)
		return Descriptor{MediaType: resp.Header.Get("Content-Type"), Digest: resp.Header.Get("Docker-Content-Digest"), Size: size}, true, nil
	case resp.StatusCode == http.StatusNotFound, resp.StatusCode == http.StatusForbidden && !strings.HasPrefix(ref, "sha256:"):
		return Descriptor{}, false, nil
	}
	return Descriptor{}, false, r.errorFrom(resp, "pull")
}

// GetManifest returns the stored bytes of a manifest and its media type. When
// ref is a digest the bytes are checked against it, so a registry cannot hand
// back different content under a digest.
func (r *Repository) GetManifest(ctx context.Context, ref string) ([]byte, string, error) {
	resp, err := r.do(ctx, http.MethodGet, r.url("manifests", ref), nil, map[string]string{"Accept": accepted})
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		if resp.StatusCode == http.StatusForbidden && !strings.HasPrefix(ref, "sha256:") {
			resp.StatusCode = http.StatusNotFound
		}
		return nil, "", r.errorFrom(resp, "pull")
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, release.MaxManifestBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("reading manifest %s@%s: %w", r.Name, ref, err)
	}
	if len(b) > release.MaxManifestBytes {
		return nil, "", fmt.Errorf("manifest %s@%s is larger than %d bytes", r.Name, ref, release.MaxManifestBytes)
	}
	if strings.HasPrefix(ref, "sha256:") {
		if got := Digest(b); got != ref {
			return nil, "", fmt.Errorf("%w: manifest %s@%s: registry served content with digest %s", trust.ErrUntrusted, r.Name, ref, got)
		}
	}
	return b, resp.Header.Get("Content-Type"), nil
}

// PutManifest stores raw under ref (a digest or a tag). It returns whether the
// registry acknowledged the manifest's subject (the OCI-Subject header), which
// means it maintains the referrers list itself.
func (r *Repository) PutManifest(ctx context.Context, ref, mediaType string, raw []byte) (subjectAcknowledged bool, err error) {
	resp, err := r.do(ctx, http.MethodPut, r.url("manifests", ref), bytes.NewReader(raw), map[string]string{"Content-Type": mediaType})
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
		return false, r.errorFrom(resp, "push")
	}
	if d := resp.Header.Get("Docker-Content-Digest"); d != "" && d != Digest(raw) {
		return false, fmt.Errorf("%w: registry stored manifest %s@%s under digest %s, not %s", trust.ErrUntrusted, r.Name, ref, d, Digest(raw))
	}
	return resp.Header.Get("OCI-Subject") != "", nil
}

// HeadBlob tells whether the blob exists and its size.
func (r *Repository) HeadBlob(ctx context.Context, digest string) (int64, bool, error) {
	resp, err := r.do(ctx, http.MethodHead, r.url("blobs", digest), nil, nil)
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		size, _ := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64)
		return size, true, nil
	case http.StatusNotFound:
		return 0, false, nil
	}
	return 0, false, r.errorFrom(resp, "pull")
}

// GetBlob opens a blob for streaming. The caller checks the digest while
// reading (see VerifyingReader); the body is never buffered here.
func (r *Repository) GetBlob(ctx context.Context, digest string) (io.ReadCloser, int64, error) {
	resp, err := r.do(ctx, http.MethodGet, r.url("blobs", digest), nil, nil)
	if err != nil {
		return nil, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, 0, r.errorFrom(resp, "pull")
	}
	return resp.Body, resp.ContentLength, nil
}

// MountBlob asks the registry to link a blob from another repository of the
// same registry. It reports false when the registry declined (it then opened
// an upload session, which is abandoned) so the caller uploads instead.
//
// A mount needs pull on fromPath besides push here; a token service grants
// only the scopes the user holds, so a user who may push here but not read
// fromPath gets the mount refused (401 or 403). That is a decline too: the
// upload that follows needs no right on fromPath, and still fails, with a
// DeniedError, if push here is what is missing.
func (r *Repository) MountBlob(ctx context.Context, digest, fromPath string) (bool, error) {
	q := url.Values{"mount": {digest}, "from": {fromPath}}
	resp, err := r.do(ctx, http.MethodPost, r.base+"/v2/"+r.path+"/blobs/uploads/?"+q.Encode(), nil, nil)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusCreated:
		return true, nil
	case http.StatusAccepted, http.StatusUnauthorized, http.StatusForbidden:
		return false, nil
	}
	return false, r.errorFrom(resp, "push")
}

// PushBlob streams size bytes from body as the blob digest in one request
// (POST then a single PUT), so memory use does not depend on blob size. The
// registry checks the digest before committing; a body cut short or wrong
// leaves nothing behind.
func (r *Repository) PushBlob(ctx context.Context, digest string, size int64, body io.Reader) error {
	resp, err := r.do(ctx, http.MethodPost, r.base+"/v2/"+r.path+"/blobs/uploads/", nil, nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return r.errorFrom(resp, "push")
	}
	loc, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
	if err != nil {
		return fmt.Errorf("upload location for %s in %s: %w", digest, r.Name, err)
	}
	q := loc.Query()
	q.Set("digest", digest)
	loc.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, loc.String(), io.NopCloser(body))
	if err != nil {
		return fmt.Errorf("building upload of %s: %w", digest, err)
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("User-Agent", r.userAgent)
	presp, err := r.hc.Do(req)
	if err != nil {
		return fmt.Errorf("uploading blob %s to %s: %w", digest, r.Name, err)
	}
	defer presp.Body.Close()
	if presp.StatusCode != http.StatusCreated {
		return r.errorFrom(presp, "push")
	}
	return nil
}

// Referrers reads the referrers of digest through the OCI referrers API.
// supported is false when the registry has no such API (a 404 that is not a
// registry error about the repository, or a non-index answer).
func (r *Repository) Referrers(ctx context.Context, digest string) (index []byte, supported bool, err error) {
	resp, err := r.do(ctx, http.MethodGet, r.url("referrers", digest), nil, map[string]string{"Accept": string(types.OCIImageIndex)})
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		b, err := io.ReadAll(io.LimitReader(resp.Body, release.MaxManifestBytes))
		if err != nil {
			return nil, false, fmt.Errorf("reading referrers of %s@%s: %w", r.Name, digest, err)
		}
		var probe struct {
			Manifests json.RawMessage `json:"manifests"`
		}
		if json.Unmarshal(b, &probe) != nil || probe.Manifests == nil {
			return nil, false, nil
		}
		return b, true, nil
	}
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusBadRequest {
		return nil, false, nil
	}
	return nil, false, r.errorFrom(resp, "pull")
}

// Digest is the sha256 digest string of b.
func Digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}
