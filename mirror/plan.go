package mirror

import (
	"context"
	"fmt"

	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
)

// PlanArtifact is one artifact of the lock and where it would go.
type PlanArtifact struct {
	Kind     release.Kind `json:"kind"`
	Name     string       `json:"name"`
	Platform string       `json:"platform,omitempty"`
	Digest   string       `json:"digest"`
	Target   string       `json:"target,omitempty"`
	Tag      string       `json:"tag,omitempty"`
	Present  bool         `json:"presentAtTarget"`
}

// PlanResult is what a mirror run would do; making it moves nothing.
type PlanResult struct {
	// Standing is the release's judgment, set by the caller that made it
	// (see Receipt.Standing).
	Standing     *Standing         `json:"standing,omitempty"`
	Version      string            `json:"version"`
	Source       string            `json:"source"`
	Trust        trust.Summary     `json:"trust"`
	LockSigner   release.Signer    `json:"lockSigner"`
	Verification *trust.Result     `json:"verification"`
	Artifacts    []PlanArtifact    `json:"artifacts"`
	Manifests    int               `json:"manifests"`
	Blobs        int               `json:"blobs"`
	TotalBytes   int64             `json:"totalBytes"`
	BytesPresent int64             `json:"bytesPresentAtTarget"`
	BytesToMove  int64             `json:"bytesToMove"`
	Target       string            `json:"target,omitempty"`
	Referrers    map[string]string `json:"targetReferrers,omitempty"`
}

// PlanOptions configures Plan. Client and Target are optional: without
// them the plan says what the release holds, with them also what the
// target already has.
type PlanOptions struct {
	Client *registry.Client
	Target string
	Repos  map[string]string
}

// Plan reports what a copy of the verified release would move.
func (rel *Verified) Plan(ctx context.Context, opts PlanOptions) (*PlanResult, error) {
	g := rel.Graph
	res := &PlanResult{Version: rel.Lock.Version, Source: rel.src.String(), Trust: rel.signed.v.Policy().Summary(),
		LockSigner: rel.Lock.Signer, Verification: rel.Verification, Manifests: len(g.Nodes)}
	var m *Mapping
	var err error
	if opts.Client != nil && opts.Target != "" {
		if m, err = NewMapping(opts.Target, rel.Lock, opts.Repos); err != nil {
			return nil, err
		}
		res.Target, res.Referrers = m.Target, map[string]string{}
	}
	for _, rb := range g.Blobs() {
		res.Blobs++
		res.TotalBytes += rb.Size
		if m == nil {
			continue
		}
		r, err := opts.Client.Repository(ctx, m.Repository(rb.Repository), false)
		if err != nil {
			return nil, err
		}
		if _, ok, err := r.HeadBlob(ctx, rb.Digest); err != nil {
			return nil, fmt.Errorf("checking %s@%s at the target: %w", r.Name, rb.Digest, err)
		} else if ok {
			res.BytesPresent += rb.Size
		}
	}
	res.BytesToMove = res.TotalBytes - res.BytesPresent
	for _, a := range rel.Lock.Artifacts {
		pa := PlanArtifact{Kind: a.Kind, Name: a.Name, Platform: a.Platform, Digest: a.Digest, Tag: a.Tag}
		if m != nil {
			pa.Target = m.Repository(a.Repository)
			r, err := opts.Client.Repository(ctx, pa.Target, false)
			if err != nil {
				return nil, err
			}
			if _, ok, err := r.HeadManifest(ctx, a.Digest); err == nil && ok {
				pa.Present = true
			}
			if _, seen := res.Referrers[pa.Target]; !seen && a.Subject == "" {
				res.Referrers[pa.Target] = "unknown (repository empty)"
			}
			if pa.Present {
				if _, ok, err := r.Referrers(ctx, a.Digest); err == nil {
					res.Referrers[pa.Target] = map[bool]string{true: referrersAPI, false: referrersTagFallback}[ok]
				}
			}
		}
		res.Artifacts = append(res.Artifacts, pa)
	}
	return res, nil
}
