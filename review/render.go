package review

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"
	texttemplate "text/template"

	"github.com/reloader-dev/reloader/release"
)

// Files written by Write, in the review directory.
const (
	FileHTML    = "index.html"
	FileMD      = "review.md"
	FileCSV     = "components.csv"
	FileJSON    = "review.json"
	FileOpenVEX = "openvex.json"
)

// verdictColour colours the licence chart; the legend repeats it in words,
// so the chart is readable without colour.
var verdictColour = map[Verdict]string{
	VerdictAllowed: "#2e7d32", VerdictNotAllowed: "#f9a825", VerdictDenied: "#c62828",
	VerdictInvalid: "#6a1b9a", VerdictNone: "#757575",
}

// Bar is one bar of the licence chart.
type Bar struct {
	Licence, Colour string
	Verdict         Verdict
	Count, Y, Width int
}

// chart lays out the licence summary as horizontal bars.
func (r *Review) chart() (bars []Bar, height int) {
	max := 1
	for _, l := range r.Licences {
		if l.Components > max {
			max = l.Components
		}
	}
	for i, l := range r.Licences {
		bars = append(bars, Bar{Licence: l.Licence, Verdict: l.Verdict, Colour: verdictColour[l.Verdict], Count: l.Components,
			Y: i * 24, Width: 1 + l.Components*400/max})
	}
	return bars, len(bars)*24 + 4
}

type view struct {
	*Review
	Bars        []Bar
	ChartHeight int
	ImageNames  []string
	Failures    []string
}

func (r *Review) view(failures []string) view {
	v := view{Review: r, Failures: failures}
	v.Bars, v.ChartHeight = r.chart()
	for _, img := range r.Images {
		v.ImageNames = append(v.ImageNames, img.Name+" "+img.Platform)
	}
	return v
}

// The page fetches nothing: styles and script are inline and the Content
// Security Policy forbids every other source, so it opens the same from
// disk on a machine without network. The chart is SVG drawn here, not by
// the script, and everything but filtering works without JavaScript.
const htmlTemplate = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Procurement review: Reloader {{.Release.Version}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
h1{margin-top:0}h2{border-bottom:1px solid #ccc;padding-bottom:2px;margin-top:1.6em}
table{border-collapse:collapse;width:100%;font-size:13px}td,th{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f4f4f4}code{font-size:12px;word-break:break-all}
.cards{display:flex;gap:12px;flex-wrap:wrap}.card{border:1px solid #ccc;border-radius:6px;padding:8px 14px;min-width:150px}
.card b{display:block;font-size:22px}.bad{color:#c62828}.ok{color:#2e7d32}
.v-allowed{color:#2e7d32}.v-denied,.v-unknown{color:#c62828;font-weight:bold}.v-not-allowed{color:#a06800}.v-noassertion{color:#757575}
.c-added{background:#e8f5e9}.c-removed{background:#ffebee}.c-upgraded,.c-downgraded,.c-changed{background:#fff8e1}
.controls{margin:6px 0}.controls input{width:24em;padding:3px}button[aria-pressed=true]{font-weight:bold;background:#dde}
.hidden{display:none}
</style></head><body>
<h1>Procurement review: Reloader {{.Release.Version}}</h1>
<table id="identity">
<tr><th>Version</th><td>{{.Release.Version}}</td></tr>
<tr><th>Commit</th><td><code>{{.Release.Commit}}</code> ({{.Release.Source}})</td></tr>
<tr><th>Created</th><td>{{.Release.Created.Format "2006-01-02 15:04:05 UTC"}}</td></tr>
<tr><th>Signer</th><td>{{.Release.Signer}}</td></tr>
{{if .Release.LockDigest}}<tr><th>Lock digest</th><td><code>{{.Release.LockDigest}}</code></td></tr>{{end}}
<tr><th>Verification</th><td id="verification">{{.Release.Verification}}</td></tr>
{{if .Release.TimeSource}}<tr><th>Time source</th><td id="time-source"><code>{{.Release.TimeSource}}</code></td></tr>{{end}}
<tr><th>Licence policy</th><td><code>{{.LicencePolicy}}</code></td></tr>
</table>
{{if .Failures}}<p class="bad" id="failures"><b>Fails --fail-on:</b>{{range .Failures}}<br>{{.}}{{end}}</p>{{end}}
<div class="cards">
<div class="card">Images<b>{{len .Images}}</b></div>
<div class="card">Components<b id="count-components">{{len .Components}}</b></div>
<div class="card">Licence findings<b class="{{if .LicenceFindings}}bad{{else}}ok{{end}}">{{len .LicenceFindings}}</b></div>
<div class="card">Vulnerability gate<b class="{{if and .Vulnerabilities.Scanned .Vulnerabilities.Passed}}ok{{else}}bad{{end}}">{{.Vulnerabilities.Status}}</b></div>
{{if .Diff}}<div class="card">Changes since {{.Diff.Against.Version}}<b>{{len .Diff.Components}}</b></div>{{end}}
</div>

<h2 id="licences">Licences</h2>
<svg id="licence-chart" role="img" aria-label="Components per licence" width="760" height="{{.ChartHeight}}" viewBox="0 0 760 {{.ChartHeight}}" xmlns="http://www.w3.org/2000/svg">
{{range .Bars}}<g><title>{{.Licence}}: {{.Count}} ({{.Verdict}})</title><text x="0" y="{{.Y}}" dy="16" font-size="12">{{.Licence}}</text><rect x="230" y="{{.Y}}" height="18" width="{{.Width}}" fill="{{.Colour}}"/><text x="{{.Width}}" dx="236" y="{{.Y}}" dy="14" font-size="12">{{.Count}} {{.Verdict}}</text></g>
{{end}}</svg>
<p>Each component (name@version) counted once across images. allowed: on the allow list; not-allowed: valid SPDX on neither list; denied: on the deny list; unknown: not valid SPDX; noassertion: the SBOM states no licence.</p>
{{if .LicenceFindings}}<table id="licence-findings"><tr><th>Component</th><th>Version</th><th>Licence</th><th>Verdict</th><th>Images</th></tr>
{{range .LicenceFindings}}<tr><td>{{.Name}}</td><td>{{.Version}}</td><td>{{.Licence}}</td><td class="v-{{.Verdict}}">{{.Verdict}}</td><td>{{range $i, $e := .Images}}{{if $i}}, {{end}}{{$e}}{{end}}</td></tr>
{{end}}</table>{{else}}<p class="ok">Every component's licence is on the allow list.</p>{{end}}

{{with .Diff}}<h2 id="diff">Changes since {{.Against.Version}}</h2>
<p>Against {{.Against.Version}} (commit <code>{{.Against.Commit}}</code>, lock <code>{{.Against.LockDigest}}</code>).</p>
<div class="controls" id="diff-controls"><button type="button" data-change="all" aria-pressed="true">all</button> <button type="button" data-change="added">added</button> <button type="button" data-change="removed">removed</button> <button type="button" data-change="upgraded">upgraded</button> <button type="button" data-change="downgraded">downgraded</button> <button type="button" data-change="changed">changed</button></div>
<table id="diff-components"><tr><th>Change</th><th>Component</th><th>Before</th><th>After</th><th>Licence</th></tr>
{{range .Components}}<tr class="c-{{.Change}}" data-change="{{.Change}}"><td>{{.Change}}</td><td>{{.Name}}</td><td>{{.OldVersion}}</td><td>{{.NewVersion}}</td><td>{{.Licence}}</td></tr>
{{else}}<tr><td colspan="5">No component changed.</td></tr>{{end}}</table>
<h3>Licence changes</h3>{{if .Licences}}<table id="diff-licences"><tr><th>Component</th><th>Before</th><th>After</th></tr>
{{range .Licences}}<tr><td>{{.Name}}</td><td>{{.OldLicence}}</td><td>{{.NewLicence}}</td></tr>{{end}}</table>{{else}}<p>None.</p>{{end}}
<h3>Vulnerabilities</h3><p>New: {{range $i, $v := .NewCVEs}}{{if $i}}, {{end}}{{$v.ID}} ({{$v.Package}}, {{$v.Severity}}){{else}}none{{end}}. Resolved: {{range $i, $v := .Resolved}}{{if $i}}, {{end}}{{$v.ID}} ({{$v.Package}}){{else}}none{{end}}.</p>
{{end}}

<h2 id="components">Components</h2>
<div class="controls"><label>Filter <input id="filter" type="search" placeholder="name, licence, PURL, supplier…"></label>
<label>Image <select id="image-filter"><option value="">all images</option>{{range .ImageNames}}<option>{{.}}</option>{{end}}</select></label>
<span id="shown"></span></div>
<table id="component-table"><thead><tr><th>Images</th><th>Name</th><th>Version</th><th>Licence</th><th>Supplier</th><th>Found in</th><th>PURL</th></tr></thead><tbody>
{{range .Components}}<tr data-images="{{join .Labels "|"}}"><td>{{range $i, $l := .Labels}}{{if $i}}<br>{{end}}{{$l}}{{end}}</td><td>{{.Name}}</td><td>{{.Version}}</td><td class="v-{{.Verdict}}">{{.Licence}}</td><td>{{if .Supplier}}{{.Supplier}}{{else}}<span class="v-noassertion">unknown</span>{{end}}</td><td>{{.Source}}</td><td><code>{{.PURL}}</code></td></tr>
{{end}}</tbody></table>

<h2 id="vulnerabilities">Vulnerabilities</h2>
{{with .Vulnerabilities}}{{with .Scan}}{{if .Skipped}}<p class="bad" id="scan-record">The signed lock says this release was made without a vulnerability scan (--no-scan).</p>{{else}}
<table id="scan-record"><tr><th colspan="2">Scan recorded in the signed lock</th></tr>
<tr><th>Scanner</th><td>{{.Scanner}} {{.ScannerVersion}}</td></tr>
<tr><th>Database</th><td><code>{{.DBDigest}}</code>{{if not .DBBuilt.IsZero}}, built {{.DBBuilt.Format "2006-01-02 15:04 UTC"}}{{end}}</td></tr>
<tr><th>Findings</th><td>{{range $i, $c := .Counts}}{{if $i}}, {{end}}{{$c.Count}} {{$c.Severity}}{{end}}</td></tr></table>{{end}}{{else}}<p>The lock records no scan (a release made before locks did).</p>{{end}}
{{if not .Scanned}}<p class="bad">Nothing here says the images were scanned: the lock records no scan that ran and no release gate report was given.</p>{{else if not .GateReport}}<p>Release gate <span class="ok">passed</span>. The individual findings are in the release's gate.json (give it with --gate-report).</p>{{else}}
<p>Release gate {{if .Passed}}<span class="ok">passed</span>{{else}}<span class="bad">failed</span>{{end}} with {{len .Findings}} findings.</p>
{{if .Findings}}<table id="vuln-findings"><tr><th>Decision</th><th>Severity</th><th>ID</th><th>Package</th><th>Installed</th><th>Fixed</th><th>Image</th><th>Reason</th></tr>
{{range .Findings}}<tr><td>{{.Decision}}</td><td>{{.Severity}}</td><td>{{.VulnerabilityID}}</td><td>{{.Package}}</td><td>{{.InstalledVersion}}</td><td>{{.FixedVersion}}</td><td>{{.Image}}</td><td>{{.Reason}}</td></tr>
{{end}}</table>{{end}}{{end}}
<h3>Exceptions</h3>{{if .Exceptions}}<table id="exceptions"><tr><th>ID</th><th>Package</th><th>Justification</th><th>Expires</th><th>From</th></tr>
{{range .Exceptions}}<tr><td>{{.ID}}</td><td>{{.Package}}</td><td>{{.Justification}}</td><td{{if .Expired}} class="bad"{{end}}>{{.Expires}}{{if .Expired}} (expired){{end}}</td><td>{{.Source}}</td></tr>{{end}}</table>
<p>The unexpired exceptions are also published as <a href="openvex.json">openvex.json</a> (OpenVEX), which Trivy reads with <code>--vex</code>.</p>{{else}}<p>The release policy accepts no vulnerability.</p>{{end}}{{end}}
` + vexHTML + `

<h2 id="minimum-elements">SBOM minimum elements</h2>
<p id="profile">Profile <b>{{.Profile}}</b>: {{.Profile.Title}}</p>
<p id="profile-result">{{if .ProfilePassed}}<span class="ok">Passed</span>: every SBOM checked carries every element of the profile.{{else}}<span class="bad">Failed</span>: some SBOMs lack elements of the profile.{{end}}</p>
<table id="ntia"><tr><th>Image</th><th>Format</th><th>SBOM</th><th>Missing</th></tr>
{{range .MinimumElements}}<tr><td>{{.Image}} {{.Platform}}</td><td>{{.Format}}</td><td><code>{{if .URI}}{{.URI}}{{else}}{{.Digest}}{{end}}</code></td><td>{{if .NotChecked}}<span class="not-checked">not checked: {{.NotChecked}}</span>{{else}}{{range .Missing}}<b>{{.Element}}</b> ({{.Source}}): {{.Detail}}<br>{{else}}<span class="ok">all present</span>{{end}}{{end}}</td></tr>
{{end}}</table>
{{with .MissingByComponent}}<h3>Missing elements by component</h3>
<table id="missing-by-component"><tr><th>Component</th><th>Image</th><th>Format</th><th>Missing</th></tr>
{{range .}}<tr><td>{{.Component}}</td><td>{{.Image}}</td><td>{{.Format}}</td><td>{{join .Elements ", "}}</td></tr>
{{end}}</table>{{end}}

<h2 id="ssdf">Secure software development (SSDF) evidence</h2>
{{with .SSDF}}<p id="ssdf-notice"><b>{{.Notice}}</b></p>
<p>Practices of {{.Framework}} that this release carries evidence for; a practice without evidence in this release is not listed.</p>
<table id="ssdf-map"><tr><th>Practice</th><th>Evidence</th></tr>
{{range .Practices}}<tr data-practice="{{.ID}}"><td><b>{{.ID}}</b> {{.Title}}</td><td>{{range .Evidence}}<div>{{.Kind}}: {{.Detail}}{{if .Digest}} <code>{{.Digest}}</code>{{end}}</div>{{end}}</td></tr>
{{end}}</table>{{end}}

<h2 id="cra">EU Cyber Resilience Act: vulnerability handling evidence</h2>
{{with .CRA}}<p id="cra-notice"><b>{{.Notice}}</b></p>
<p>Items of {{.Framework}} that this release carries evidence for.</p>
<table id="cra-map"><tr><th>Item</th><th>Evidence</th></tr>
{{range .Items}}<tr data-item="{{.ID}}"><td><b>{{.ID}}</b> {{.Title}}</td><td>{{range .Evidence}}<div>{{.Kind}}: {{.Detail}}{{if .Digest}} <code>{{.Digest}}</code>{{end}}</div>{{end}}</td></tr>
{{end}}</table>{{end}}

<script>
(function () {
  var filter = document.getElementById('filter'), image = document.getElementById('image-filter');
  var rows = document.querySelectorAll('#component-table tbody tr'), shown = document.getElementById('shown');
  function apply() {
    var q = filter.value.toLowerCase(), img = image.value, n = 0;
    rows.forEach(function (r) {
      var ok = (!q || r.textContent.toLowerCase().indexOf(q) >= 0) && (!img || r.getAttribute('data-images').split('|').indexOf(img) >= 0);
      r.classList.toggle('hidden', !ok);
      if (ok) { n++; }
    });
    shown.textContent = n + ' of ' + rows.length + ' shown';
  }
  filter.addEventListener('input', apply);
  image.addEventListener('change', apply);
  apply();
  var buttons = document.querySelectorAll('#diff-controls button');
  buttons.forEach(function (b) {
    b.addEventListener('click', function () {
      var c = b.getAttribute('data-change');
      buttons.forEach(function (o) { o.setAttribute('aria-pressed', String(o === b)); });
      document.querySelectorAll('#diff-components tr[data-change]').forEach(function (r) {
        r.classList.toggle('hidden', c !== 'all' && r.getAttribute('data-change') !== c);
      });
    });
  });
})();
</script>
</body></html>
`

const mdTemplate = `# Procurement review: Reloader {{.Release.Version}}

| | |
|---|---|
| Version | {{.Release.Version}} |
| Commit | ` + "`{{.Release.Commit}}`" + ` ({{.Release.Source}}) |
| Created | {{.Release.Created.Format "2006-01-02 15:04:05 UTC"}} |
| Signer | {{md .Release.Signer}} |
{{if .Release.LockDigest}}| Lock digest | ` + "`{{.Release.LockDigest}}`" + ` |
{{end}}| Verification | {{md .Release.Verification}} |
{{if .Release.TimeSource}}| Time source | ` + "`{{.Release.TimeSource}}`" + ` |
{{end}}| Licence policy | ` + "`{{.LicencePolicy}}`" + ` |
{{if .Failures}}
**Fails --fail-on:**
{{range .Failures}}- {{md .}}
{{end}}{{end}}
{{len .Images}} images, {{len .Components}} components, {{len .LicenceFindings}} licence findings.

## Licences

| Licence | Verdict | Components |
|---|---|---|
{{range .Licences}}| {{md .Licence}} | {{.Verdict}} | {{.Components}} |
{{end}}
{{if .LicenceFindings}}### Licence findings

| Component | Version | Licence | Verdict |
|---|---|---|---|
{{range .LicenceFindings}}| {{md .Name}} | {{md .Version}} | {{md .Licence}} | {{.Verdict}} |
{{end}}{{end}}
{{with .Diff}}## Changes since {{.Against.Version}}

| Change | Component | Before | After |
|---|---|---|---|
{{range .Components}}| {{.Change}} | {{md .Name}} | {{md .OldVersion}} | {{md .NewVersion}} |
{{end}}
Licence changes: {{range $i, $l := .Licences}}{{if $i}}; {{end}}{{md $l.Name}} {{md $l.OldLicence}} → {{md $l.NewLicence}}{{else}}none{{end}}.
New vulnerabilities: {{range $i, $v := .NewCVEs}}{{if $i}}, {{end}}{{$v.ID}} ({{md $v.Package}}){{else}}none{{end}}. Resolved: {{range $i, $v := .Resolved}}{{if $i}}, {{end}}{{$v.ID}} ({{md $v.Package}}){{else}}none{{end}}.
{{end}}
## Vulnerabilities
{{with .Vulnerabilities}}{{with .Scan}}{{if .Skipped}}
The signed lock says this release was made without a vulnerability scan (--no-scan).
{{else}}
Scan recorded in the signed lock: {{.Scanner}} {{.ScannerVersion}}, database {{.DBDigest}}{{if not .DBBuilt.IsZero}} built {{.DBBuilt.Format "2006-01-02 15:04 UTC"}}{{end}}; findings {{range $i, $c := .Counts}}{{if $i}}, {{end}}{{$c.Count}} {{$c.Severity}}{{end}}.
{{end}}{{end}}{{if not .Scanned}}
Nothing here says the images were scanned: the lock records no scan that ran and no release gate report was given.
{{else if not .GateReport}}
Release gate passed. The individual findings are in the release's gate.json (give it with --gate-report).
{{else}}
Release gate {{if .Passed}}passed{{else}}FAILED{{end}} with {{len .Findings}} findings.
{{if .Findings}}
| Decision | Severity | ID | Package | Image | Reason |
|---|---|---|---|---|---|
{{range .Findings}}| {{.Decision}} | {{.Severity}} | {{.VulnerabilityID}} | {{md .Package}} | {{md .Image}} | {{md .Reason}} |
{{end}}{{end}}{{end}}
### Exceptions
{{range .Exceptions}}
- {{.ID}} in {{md .Package}}, until {{.Expires}}{{if .Expired}} (EXPIRED){{end}} ({{.Source}}): {{md .Justification}}{{else}}
None.{{end}}
{{end}}` + vexMD + `
## SBOM minimum elements

Profile {{.Profile}}: {{.Profile.Title}}

{{if .ProfilePassed}}Passed: every SBOM checked carries every element of the profile.{{else}}FAILED: some SBOMs lack elements of the profile.{{end}}

| Image | Format | Missing |
|---|---|---|
{{range .MinimumElements}}| {{.Image}} {{.Platform}} | {{.Format}} | {{if .NotChecked}}not checked: {{md .NotChecked}}{{else}}{{range $i, $m := .Missing}}{{if $i}}<br>{{end}}{{$m.Element}}: {{md $m.Detail}}{{else}}all present{{end}}{{end}} |
{{end}}
## SSDF evidence
{{with .SSDF}}
**{{md .Notice}}**

Practices of {{.Framework}} that this release carries evidence for:

| Practice | Evidence |
|---|---|
{{range .Practices}}| **{{.ID}}** {{md .Title}} | {{range $i, $e := .Evidence}}{{if $i}}<br>{{end}}{{$e.Kind}}: {{md $e.Detail}}{{if $e.Digest}} ` + "`{{$e.Digest}}`" + `{{end}}{{end}} |
{{end}}{{end}}
## EU Cyber Resilience Act evidence
{{with .CRA}}
**{{md .Notice}}**

Items of {{.Framework}} that this release carries evidence for:

| Item | Evidence |
|---|---|
{{range .Items}}| **{{.ID}}** {{md .Title}} | {{range $i, $e := .Evidence}}{{if $i}}<br>{{end}}{{$e.Kind}}: {{md $e.Detail}}{{if $e.Digest}} ` + "`{{$e.Digest}}`" + `{{end}}{{end}} |
{{end}}{{end}}
## Components

| Component | Version | Licence | Images |
|---|---|---|---|
{{range .Components}}| {{md .Name}} | {{md .Version}} | {{md .Licence}} | {{range $i, $l := .Labels}}{{if $i}}, {{end}}{{$l}}{{end}} |
{{end}}
The same list with PURL, supplier and where each was found is in components.csv, one row per component.
`

// mdEscape keeps a value from breaking a Markdown table row.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;").Replace(s)
}

// HTML renders the self-contained review page.
func (r *Review) HTML(failures []string) ([]byte, error) {
	var b bytes.Buffer
	if err := template.Must(template.New("review").Funcs(template.FuncMap{"join": strings.Join}).Parse(htmlTemplate)).Execute(&b, r.view(failures)); err != nil {
		return nil, fmt.Errorf("rendering the review page: %w", err)
	}
	return b.Bytes(), nil
}

// Markdown renders the review for release notes and tickets.
func (r *Review) Markdown(failures []string) ([]byte, error) {
	var b bytes.Buffer
	t := texttemplate.Must(texttemplate.New("md").Funcs(texttemplate.FuncMap{"md": mdEscape}).Parse(mdTemplate))
	if err := t.Execute(&b, r.view(failures)); err != nil {
		return nil, fmt.Errorf("rendering the Markdown review: %w", err)
	}
	return b.Bytes(), nil
}

// CSV renders one row per component, naming the images that carry it.
func (r *Review) CSV() ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"name", "version", "purl", "licence", "licence_declared", "licence_verdict", "supplier", "source", "images"})
	for _, c := range r.Components {
		_ = w.Write([]string{csvSafe(c.Name), csvSafe(c.Version), csvSafe(c.PURL), csvSafe(c.Licence),
			csvSafe(c.LicenceDeclared), string(c.Verdict), csvSafe(c.Supplier), csvSafe(c.Source), strings.Join(c.Labels(), "; ")})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, fmt.Errorf("writing the components CSV: %w", err)
	}
	return b.Bytes(), nil
}

// csvSafe keeps a spreadsheet from reading an SBOM value as a formula.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// Write renders the review into dir: the HTML page, the Markdown, the
// components CSV, the review as JSON and the exceptions as OpenVEX.
func Write(dir string, l *release.Lock, r *Review, failures []string) error {
	html, err := r.HTML(failures)
	if err != nil {
		return err
	}
	md, err := r.Markdown(failures)
	if err != nil {
		return err
	}
	csvData, err := r.CSV()
	if err != nil {
		return err
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the review: %w", err)
	}
	vexDoc, err := OpenVEX(l, r)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("writing the review: %w", err)
	}
	for name, data := range map[string][]byte{FileHTML: html, FileMD: md, FileCSV: csvData, FileJSON: append(js, '\n'), FileOpenVEX: vexDoc} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("writing the review: %w", err)
		}
	}
	return nil
}
