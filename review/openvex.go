package review

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	"github.com/openvex/go-vex/pkg/vex"

	"github.com/reloader-dev/reloader/release"
)

// OpenVEX returns the release policy's unexpired exceptions as an OpenVEX
// document: each accepted vulnerability is "not_affected" for every image
// index of the release, with the exception's justification as the impact
// statement, so Trivy (--vex) and other scanners honour the same decisions
// the release gate made. Expired exceptions are left out: they no longer
// accept anything.
func OpenVEX(l *release.Lock, r *Review) ([]byte, error) {
	created := l.Created.UTC()
	doc := vex.VEX{Metadata: vex.Metadata{
		Context:   vex.ContextLocator(),
		ID:        strings.TrimSuffix(l.Source, "/") + "/releases/" + l.Version + "/openvex.json",
		Author:    "Reloader release policy (" + l.Source + ")",
		Timestamp: &created,
		Version:   1,
		Tooling:   "reloader-mirror review",
	}, Statements: []vex.Statement{}}
	var products []vex.Product
	for _, a := range l.Artifacts {
		if a.Kind != release.KindImageIndex {
			continue
		}
		products = append(products, vex.Product{Component: vex.Component{ID: ociPURL(a)}})
	}
	purls := map[string]string{}
	for _, c := range r.Components {
		if c.PURL != "" {
			purls[c.Name] = c.PURL
		}
	}
	for _, e := range r.Vulnerabilities.Exceptions {
		if e.Expired {
			continue
		}
		sub := purls[e.Package]
		if sub == "" {
			sub = e.Package
		}
		ps := make([]vex.Product, len(products))
		for i, p := range products {
			p.Subcomponents = []vex.Subcomponent{{Component: vex.Component{ID: sub}}}
			ps[i] = p
		}
		st := vex.Statement{
			Vulnerability:   vex.Vulnerability{Name: vex.VulnerabilityID(e.ID)},
			Timestamp:       &created,
			Products:        ps,
			Status:          vex.StatusNotAffected,
			ImpactStatement: e.Justification,
			StatusNotes:     fmt.Sprintf("accepted by the release policy until %s (00:00 UTC)", e.Expires),
		}
		if err := st.Validate(); err != nil {
			return nil, fmt.Errorf("OpenVEX statement for %s in %s: %w", e.ID, e.Package, err)
		}
		doc.Statements = append(doc.Statements, st)
	}
	var buf bytes.Buffer
	if err := doc.ToJSON(&buf); err != nil {
		return nil, fmt.Errorf("encoding the OpenVEX document: %w", err)
	}
	return buf.Bytes(), nil
}

// ociPURL is the package URL of an image by digest, as scanners name it.
func ociPURL(a release.Artifact) string {
	name := a.Repository
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	q := url.Values{}
	q.Set("repository_url", a.Repository)
	return "pkg:oci/" + name + "@" + url.QueryEscape(a.Digest) + "?" + q.Encode()
}
