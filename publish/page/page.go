// Package page renders the versions page of a release from its lock, in
// Markdown (for the GitHub release notes) and static HTML: every artifact by
// digest, the cosign command that verifies it, and links to the SBOMs.
package page

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"sort"
	"strings"
	texttemplate "text/template"
	"time"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/provenance"
	"github.com/reloader-dev/reloader/release/security"
	"github.com/reloader-dev/reloader/release/support"
	"github.com/reloader-dev/reloader/release/trust"
)

// Options configures the page.
type Options struct {
	// SBOMBaseURL prefixes SBOM file names in links ("../sbom/", or the
	// release's download URL).
	SBOMBaseURL string
	// LockRef is where the lock artifact is published (repo:version).
	LockRef string
	// Provenance summarises each image's and index's provenance, by digest.
	Provenance map[string]provenance.Summary
	// Support is the support table (release/support.yaml); nil leaves the
	// support section out.
	Support *support.Table
	// Advisories are the project's security advisories
	// (release/advisories); each is published as advisories/<ID>.json
	// next to the page.
	Advisories []*support.Advisory
	// ReviewURL links the procurement review published with the page;
	// empty when there is none.
	ReviewURL string
	// TrustedRootJSON is the Sigstore trusted_root.json a keyless release
	// was verified against; it is published next to the page as
	// TrustedRootFile, with its sha256 on the page, which users pass as
	// --trusted-root-sha256.
	TrustedRootJSON []byte
	// SecurityTxt is the release's security.txt (RFC 9116: the security
	// contact, the disclosure policy, an expiry), published next to the
	// page as SecurityTxtFile; nil publishes none.
	SecurityTxt []byte
	// CSAF links the release's CSAF 2.0 documents (its advisories and VEX
	// statements), each signed (a Sigstore bundle beside it), which the
	// pipeline writes next to the page.
	CSAF []Link
}

// SecurityTxtFile is the security.txt's file name next to the page.
const SecurityTxtFile = security.FileName

// EmptyTrustedRoot is the trusted root a key-signed release with Sigstore
// bundles puts beside its page: no authority, no log, no key. The release's
// key is the only anchor; the file only satisfies cosign v2, which wants a
// trusted root for any bundle, even with --key.
const EmptyTrustedRoot = `{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"}`

// keyBundles reports whether a key-signed lock lists Sigstore bundle
// signatures (reloader-release publish --signature-format bundle or both).
func keyBundles(l *release.Lock) bool {
	for _, a := range l.Artifacts {
		if trust.Format(a) == trust.FormatBundle {
			return true
		}
	}
	return false
}

// TrustedRootFile is the trusted root's file name next to the page.
const TrustedRootFile = "trusted_root.json"

// checkSigner is what the page says about the signer it names: the page
// travels with the release, so whoever could change one could change the
// other, and a key or identity read from it proves nothing.
const checkSigner = "Check the signer these commands name (the key, or the certificate identity and issuer) against the project documentation (SECURITY.md), not against this page: whoever could alter the release could alter the page."

// AdvisoryDir is the directory, next to the page, of the OSV files.
const AdvisoryDir = "advisories"

// SupportRow is one release series of the support table.
type SupportRow struct {
	Series, Released, EndOfSupport string
	// Supported is the series' status when the release was made.
	Supported bool
	// ThisRelease marks the series of the release the page describes.
	ThisRelease bool
	// Advisories affecting some version of the series.
	Advisories []Link
}

// AdvisoryRow is one security advisory.
type AdvisoryRow struct {
	ID, Summary, URL, Published string
	Aliases                     []string
	// AffectsThisRelease: the version the page describes is affected.
	AffectsThisRelease bool
}

// SBOMFileName is the file name of an SBOM document on the versions page
// and in the release's sbom/ directory: "reloader-linux-arm-v7.spdx.json".
func SBOMFileName(imageName, platform, mediaType string) string {
	ext := ".spdx.json"
	switch {
	case strings.Contains(mediaType, "cyclonedx"):
		ext = ".cdx.json"
	case strings.Contains(mediaType, "spdx3"):
		// The extension IANA's registration of application/spdx3+json gives.
		ext = ".spdx3.json"
	}
	return imageName + "-" + strings.ReplaceAll(platform, "/", "-") + ext
}

// Row is one artifact of the page.
type Row struct {
	Kind, Name, Variant, Platform, Ref, Digest, Verify string
	Size                                               int64
	SBOMs                                              []Link
	// Provenance is "builder, commit, toolchain"; VerifyProvenance the
	// cosign command that checks it.
	Provenance, VerifyProvenance string
}

// Link is a named link.
type Link struct{ Name, URL string }

// View is what the templates render.
type View struct {
	Version, Commit, Source, Created string
	Signer                           string
	VerifyLock                       string
	// Scan says how the images were scanned, or that they were not.
	Scan string
	// Unscanned marks a release nobody scanned, prominently.
	Unscanned  bool
	Rows       []Row
	Support    []SupportRow
	Advisories []AdvisoryRow
	ReviewURL  string
	// TrustedRootSHA256 is the hex sha256 of the published trusted root
	// (keyless releases only).
	TrustedRootSHA256 string
	// CheckSigner says where the signer must be checked.
	CheckSigner string
	// FIPS says what the -fips images are, when the release has them.
	FIPS string
	// SecurityTxt links the published security.txt; empty when none.
	SecurityTxt string
	// CSAF links the signed CSAF 2.0 documents.
	CSAF []Link
}

// fipsNote is what the page says of a release's -fips images.
const fipsNote = "The -fips images run the controller built against Go's FIPS 140-3 module (GOFIPS140, recorded in each one's provenance and SBOMs), in FIPS 140-only mode by default (their image config sets GODEBUG=fips140=only)."

// scanLine describes the lock's scan record for people.
func scanLine(l *release.Lock) string {
	if !l.Scanned() {
		return "UNSCANNED: this release was not scanned for vulnerabilities (built with --no-scan); reloader-mirror refuses it without --allow-unscanned."
	}
	sc := l.Scan
	var counts []string
	for _, sev := range []string{"CRITICAL", "HIGH", "MEDIUM", "LOW", "UNKNOWN"} {
		counts = append(counts, fmt.Sprintf("%s %d", sev, sc.Counts[sev]))
	}
	line := fmt.Sprintf("Scanned by %s %s, database %s built %s: %s.", sc.Scanner, sc.ScannerVersion, sc.DBDigest,
		sc.DBBuilt.UTC().Format("2006-01-02 15:04 UTC"), strings.Join(counts, ", "))
	for _, e := range sc.Exceptions {
		line += fmt.Sprintf(" Exception %s in %s until %s: %s.", e.ID, e.Package, e.Expires, e.Justification)
	}
	return line
}

// cosignFlags are the trust flags of the page's cosign commands, the
// keyless identity they name (who) and how the page names the signer.
func cosignFlags(l *release.Lock) (flags, who, signer string) {
	if l.Signer.Keyless() {
		id := "--certificate-identity=" + shellQuote(l.Signer.Identity)
		if l.Signer.IdentityRegexp != "" {
			id = "--certificate-identity-regexp=" + shellQuote(l.Signer.IdentityRegexp)
		}
		// Keyless signatures are Sigstore bundles attached as referrers. The
		// trusted root is named, as for the lock: offline, cosign has no
		// other (it would fetch the public-good one through TUF).
		who = id + " --certificate-oidc-issuer=" + shellQuote(l.Signer.Issuer)
		return "--new-bundle-format --trusted-root trusted_root.json " + who, who,
			"keyless: " + l.Signer.Identity + l.Signer.IdentityRegexp + " issued by " + l.Signer.Issuer
	}
	flags = "--key cosign.pub --insecure-ignore-tlog=true"
	if keyBundles(l) {
		// cosign v2 reads a subject with any bundle referrer as bundles
		// and then wants a trusted root even with --key; the empty one
		// written beside the page adds no trust (the key is the anchor).
		flags += " --trusted-root " + TrustedRootFile
	}
	return flags, "", "public key (cosign.pub):\n" + l.Signer.PublicKey
}

// Build turns the lock into the page's view: indexes, images and charts
// with their verify commands; signatures and attestations are not listed,
// they are what the commands check.
func Build(l *release.Lock, opts Options) View {
	v := View{Version: l.Version, Commit: l.Commit, Source: l.Source, Created: l.Created.UTC().Format("2006-01-02 15:04:05 UTC"),
		Scan: scanLine(l), Unscanned: !l.Scanned(), CheckSigner: checkSigner}
	if l.Signer.Keyless() && len(opts.TrustedRootJSON) > 0 {
		v.TrustedRootSHA256 = fmt.Sprintf("%x", sha256.Sum256(opts.TrustedRootJSON))
	}
	flags, who, signer := cosignFlags(l)
	v.Signer = signer
	trust := "--key cosign.pub"
	if l.Signer.Keyless() {
		trust = "--trusted-root trusted_root.json " + who
	}
	v.VerifyLock = fmt.Sprintf("reloader-release verify --lock %s --expect-version %s %s", release.LockFileName, l.Version, trust)
	if opts.LockRef != "" {
		mirrorTrust := trust
		if v.TrustedRootSHA256 != "" {
			mirrorTrust += " --trusted-root-sha256 " + v.TrustedRootSHA256
		}
		v.VerifyLock += fmt.Sprintf("\n# or, as the mirror does before copying:\nreloader-mirror verify --lock-ref %s --expect-version %s %s", opts.LockRef, l.Version, mirrorTrust)
	}
	for _, a := range l.Artifacts {
		switch a.Kind {
		case release.KindImageIndex, release.KindImage, release.KindChart:
		default:
			continue
		}
		if a.Variant == release.VariantFIPS || a.Variant == release.VariantUBIFIPS {
			v.FIPS = fipsNote
		}
		ref := a.Repository + "@" + a.Digest
		row := Row{Kind: string(a.Kind), Name: a.Name, Variant: a.Variant, Platform: a.Platform, Ref: ref, Digest: a.Digest,
			Size: a.Size, Verify: "cosign verify " + flags + " " + ref}
		if p, ok := opts.Provenance[a.Digest]; ok {
			row.Provenance = fmt.Sprintf("built by %s from commit %s with %s", p.Builder, p.Commit, p.GoVersion)
			row.VerifyProvenance = "cosign verify-attestation --type slsaprovenance1 " + flags + " " + ref
		}
		if a.Kind == release.KindImage {
			for _, s := range l.Artifacts {
				if s.Kind == release.KindSBOM && s.Subject == a.Digest {
					f := SBOMFileName(s.Name, s.Platform, s.ArtifactType)
					row.SBOMs = append(row.SBOMs, Link{Name: f, URL: opts.SBOMBaseURL + f})
				}
			}
		}
		v.Rows = append(v.Rows, row)
	}
	v.ReviewURL = opts.ReviewURL
	v.CSAF = opts.CSAF
	if len(opts.SecurityTxt) > 0 {
		v.SecurityTxt = SecurityTxtFile
	}
	asOf := l.Created
	if opts.Support != nil {
		for _, sr := range opts.Support.Series {
			row := SupportRow{Series: sr.Series, Released: sr.Released.Format(time.DateOnly), EndOfSupport: sr.EndOfSupport.Format(time.DateOnly),
				Supported: sr.Supported(asOf), ThisRelease: sr.Contains(l.Version)}
			for _, a := range opts.Advisories {
				if a.AffectsSeries(sr) {
					row.Advisories = append(row.Advisories, Link{Name: a.ID, URL: AdvisoryDir + "/" + a.ID + ".json"})
				}
			}
			v.Support = append(v.Support, row)
		}
	}
	for _, a := range opts.Advisories {
		row := AdvisoryRow{ID: a.ID, Summary: a.Summary, URL: AdvisoryDir + "/" + a.ID + ".json", Aliases: a.Aliases, AffectsThisRelease: a.Affects(l.Version)}
		if a.Published != nil {
			row.Published = a.Published.UTC().Format(time.DateOnly)
		}
		v.Advisories = append(v.Advisories, row)
	}
	order := map[string]int{string(release.KindImageIndex): 0, string(release.KindImage): 1, string(release.KindChart): 2}
	sort.SliceStable(v.Rows, func(i, j int) bool {
		a, b := v.Rows[i], v.Rows[j]
		if order[a.Kind] != order[b.Kind] {
			return order[a.Kind] < order[b.Kind]
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Platform < b.Platform
	})
	return v
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " '\"$`\\*?[]{}()<>|&;#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

const markdown = `# Reloader {{.Version}}

Built from {{.Source}} at commit ` + "`{{.Commit}}`" + `, {{.Created}}.

{{if .Unscanned}}**{{.Scan}}**{{else}}{{.Scan}}{{end}}

Every artifact below is signed. Verify the release lock first, then any artifact by digest:

` + "```sh\n{{.VerifyLock}}\n```" + `

Signer: {{.Signer}}

**{{.CheckSigner}}**
{{if .TrustedRootSHA256}}
Trusted root: [` + TrustedRootFile + `](` + TrustedRootFile + `), sha256 ` + "`{{.TrustedRootSHA256}}`" + ` (give it to reloader-mirror as ` + "`--trusted-root-sha256`" + `; compare it with the trusted root you obtained from Sigstore yourself).
{{end}}{{if .FIPS}}
{{.FIPS}}
{{end}}
| Kind | Name | Platform | Digest | SBOMs |
|---|---|---|---|---|
{{range .Rows}}| {{.Kind}} | {{.Name}} | {{.Platform}} | ` + "`{{.Ref}}`" + ` | {{range $i, $s := .SBOMs}}{{if $i}}, {{end}}[{{$s.Name}}]({{$s.URL}}){{end}} |
{{end}}
## Verify

{{range .Rows}}- {{.Name}} {{.Platform}}{{if eq .Kind "image-index"}} (index){{end}}: ` + "`{{.Verify}}`" + `
{{end}}
## Provenance

Each image and index carries signed SLSA v1 build provenance; reloader-mirror checks it before copying.

{{range .Rows}}{{if .Provenance}}- {{.Name}} {{.Platform}}{{if eq .Kind "image-index"}} (index){{end}}: {{.Provenance}}: ` + "`{{.VerifyProvenance}}`" + `
{{end}}{{end}}{{if .ReviewURL}}
Procurement review (components, licences, vulnerabilities, NTIA minimum elements): [{{.ReviewURL}}]({{.ReviewURL}})
{{end}}{{if .Support}}
## Supported versions

| Series | Released | End of support | Status | Advisories |
|---|---|---|---|---|
{{range .Support}}| {{.Series}}{{if .ThisRelease}} (this release){{end}} | {{.Released}} | {{.EndOfSupport}} | {{if .Supported}}supported{{else}}END OF SUPPORT{{end}} | {{range $i, $a := .Advisories}}{{if $i}}, {{end}}[{{$a.Name}}]({{$a.URL}}){{else}}none{{end}} |
{{end}}{{end}}
## Security advisories
{{if .SecurityTxt}}
Report vulnerabilities as [{{.SecurityTxt}}]({{.SecurityTxt}}) (RFC 9116) says: the contact and the coordinated disclosure policy.
{{end}}
{{range .Advisories}}- [{{.ID}}]({{.URL}}){{range .Aliases}} ({{.}}){{end}}{{if .Published}}, {{.Published}}{{end}}: {{.Summary}}{{if .AffectsThisRelease}} **Affects this release.**{{end}}
{{else}}No security advisory has been published.
{{end}}{{if .CSAF}}
CSAF 2.0 documents (advisories and VEX), each signed (Sigstore bundle: the file name + .sigstore.json): {{range $i, $c := .CSAF}}{{if $i}}, {{end}}[{{$c.Name}}]({{$c.URL}}){{end}}
{{end}}`

const htmlPage = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Reloader {{.Version}}</title>
<style>body{font-family:sans-serif;margin:2em}code{font-size:90%;word-break:break-all}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}</style>
</head><body>
<h1>Reloader {{.Version}}</h1>
<p>Built from <a href="{{.Source}}">{{.Source}}</a> at commit <code>{{.Commit}}</code>, {{.Created}}.</p>
<p{{if .Unscanned}} style="color:#b00;font-weight:bold"{{end}}>{{.Scan}}</p>
<p>Verify the release lock first:</p><pre><code>{{.VerifyLock}}</code></pre>
<p>Signer:</p><pre>{{.Signer}}</pre>
<p><strong>{{.CheckSigner}}</strong></p>
{{if .TrustedRootSHA256}}<p id="trusted-root">Trusted root: <a href="` + TrustedRootFile + `">` + TrustedRootFile + `</a>, sha256 <code>{{.TrustedRootSHA256}}</code> (give it to reloader-mirror as <code>--trusted-root-sha256</code>; compare it with the trusted root you obtained from Sigstore yourself).</p>{{end}}
{{if .FIPS}}<p>{{.FIPS}}</p>{{end}}
<table><tr><th>Kind</th><th>Name</th><th>Platform</th><th>Digest and verification</th><th>SBOMs</th></tr>
{{range .Rows}}<tr><td>{{.Kind}}</td><td>{{.Name}}</td><td>{{.Platform}}</td><td><code>{{.Ref}}</code><br><code>{{.Verify}}</code>{{if .Provenance}}<br>{{.Provenance}}<br><code>{{.VerifyProvenance}}</code>{{end}}</td><td>{{range .SBOMs}}<a href="{{.URL}}">{{.Name}}</a><br>{{end}}</td></tr>
{{end}}</table>
{{if .ReviewURL}}<p>Procurement review (components, licences, vulnerabilities, NTIA minimum elements): <a href="{{.ReviewURL}}">{{.ReviewURL}}</a></p>{{end}}
{{if .Support}}<h2>Supported versions</h2>
<table id="support"><tr><th>Series</th><th>Released</th><th>End of support</th><th>Status</th><th>Advisories</th></tr>
{{range .Support}}<tr data-series="{{.Series}}" data-end-of-support="{{.EndOfSupport}}"><td>{{.Series}}{{if .ThisRelease}} (this release){{end}}</td><td><time datetime="{{.Released}}">{{.Released}}</time></td><td><time datetime="{{.EndOfSupport}}">{{.EndOfSupport}}</time></td><td{{if not .Supported}} style="color:#b00"{{end}}>{{if .Supported}}supported{{else}}end of support{{end}}</td><td>{{range .Advisories}}<a href="{{.URL}}">{{.Name}}</a><br>{{else}}none{{end}}</td></tr>
{{end}}</table>{{end}}
<h2>Security advisories</h2>
{{if .SecurityTxt}}<p id="security-contact">Report vulnerabilities as <a href="{{.SecurityTxt}}">{{.SecurityTxt}}</a> (RFC 9116) says: the contact and the coordinated disclosure policy.</p>{{end}}
{{if .Advisories}}<table id="advisories"><tr><th>ID</th><th>Published</th><th>Summary</th><th>This release</th></tr>
{{range .Advisories}}<tr><td><a href="{{.URL}}">{{.ID}}</a>{{range .Aliases}}<br>{{.}}{{end}}</td><td>{{.Published}}</td><td>{{.Summary}}</td><td{{if .AffectsThisRelease}} style="color:#b00;font-weight:bold"{{end}}>{{if .AffectsThisRelease}}affected{{else}}not affected{{end}}</td></tr>
{{end}}</table>{{else}}<p>No security advisory has been published.</p>{{end}}
{{if .CSAF}}<p id="csaf">CSAF 2.0 documents (advisories and VEX), each signed (its Sigstore bundle is the file name + <code>.sigstore.json</code>): {{range .CSAF}}<a href="{{.URL}}">{{.Name}}</a> (<a href="{{.URL}}.sigstore.json">bundle</a>) {{end}}</p>{{end}}
</body></html>
`

// Render returns the Markdown and HTML pages.
func Render(v View) (md, html []byte, err error) {
	var mb, hb bytes.Buffer
	if err := texttemplate.Must(texttemplate.New("md").Parse(markdown)).Execute(&mb, v); err != nil {
		return nil, nil, fmt.Errorf("rendering the versions page: %w", err)
	}
	if err := template.Must(template.New("html").Parse(htmlPage)).Execute(&hb, v); err != nil {
		return nil, nil, fmt.Errorf("rendering the versions page: %w", err)
	}
	return mb.Bytes(), hb.Bytes(), nil
}

// Write renders the page into dir as versions.md and index.html, with
// every advisory as advisories/<ID>.json, byte for byte as in the repository.
func Write(dir string, l *release.Lock, opts Options) error {
	md, html, err := Render(Build(l, opts))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, AdvisoryDir), 0o755); err != nil {
		return fmt.Errorf("writing the versions page: %w", err)
	}
	for _, a := range opts.Advisories {
		if err := os.WriteFile(filepath.Join(dir, AdvisoryDir, a.ID+".json"), a.Raw, 0o644); err != nil {
			return fmt.Errorf("writing the versions page: advisory %s: %w", a.ID, err)
		}
	}
	if l.Signer.Keyless() && len(opts.TrustedRootJSON) > 0 {
		if err := os.WriteFile(filepath.Join(dir, TrustedRootFile), opts.TrustedRootJSON, 0o644); err != nil {
			return fmt.Errorf("writing the versions page: %w", err)
		}
	}
	if !l.Signer.Keyless() && keyBundles(l) {
		if err := os.WriteFile(filepath.Join(dir, TrustedRootFile), []byte(EmptyTrustedRoot+"\n"), 0o644); err != nil {
			return fmt.Errorf("writing the versions page: %w", err)
		}
	}
	if len(opts.SecurityTxt) > 0 {
		if err := os.WriteFile(filepath.Join(dir, SecurityTxtFile), opts.SecurityTxt, 0o644); err != nil {
			return fmt.Errorf("writing the versions page: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "versions.md"), md, 0o644); err != nil {
		return fmt.Errorf("writing the versions page: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.html"), html, 0o644); err != nil {
		return fmt.Errorf("writing the versions page: %w", err)
	}
	return nil
}
