package review

// vexHTML is the page's section on the release's VEX statements and CSAF
// documents, between the vulnerabilities and the SBOM minimum elements.
// The CSAF links are relative to the release's page/review/, beside which
// the versions page keeps csaf/.
const vexHTML = `
<h3 id="vex">VEX statements</h3>{{if .VEXStatements}}<table id="vex-statements"><tr><th>Vulnerability</th><th>Package</th><th>Status</th><th>Stated</th><th>Until</th></tr>
{{range .VEXStatements}}<tr data-vulnerability="{{.Vulnerability}}"><td>{{.Vulnerability}}</td><td>{{.Package}}</td><td>{{.Status}}</td><td>{{.Stated.Format "2006-01-02"}}</td><td{{if .PastItsDate}} class="bad"{{end}}>{{.Until}}{{if .PastItsDate}} (past its date: no longer holds){{end}}</td></tr>
{{end}}</table>
<p>The release attests these as OpenVEX on every image and publishes them as a CSAF VEX document. Each carries when it was stated and until when it holds (OpenVEX: its timestamp, and status_notes opening "Stated until"; CSAF: the dated flag or mitigation, and a dated "Stated until" impact threat); from that date it no longer holds, and reloader-mirror refuses the release.</p>{{else}}<p>The release states no VEX statement.</p>{{end}}

<h2 id="csaf-documents">CSAF documents</h2>{{if .CSAF}}<table id="csaf"><tr><th>Document</th><th>Category</th><th>Covers</th></tr>
{{range .CSAF}}<tr data-csaf="{{.ID}}"><td><a href="../csaf/{{.File}}">{{.ID}}</a></td><td>{{.Category}}</td><td>{{range $i, $c := .Covers}}{{if $i}}<br>{{end}}{{$c}}{{end}}</td></tr>
{{end}}</table>
<p>CSAF 2.0, published beside the versions page (csaf/), each with its Sigstore bundle (.sigstore.json); reloader-mirror verifies each before it reads one (--advisories).</p>{{else}}<p>The release publishes no CSAF document: it carries no advisory and states no VEX statement.</p>{{end}}
`

// vexMD is the same section in the Markdown review.
const vexMD = `
### VEX statements
{{range .VEXStatements}}
- {{.Vulnerability}} in {{md .Package}}: {{.Status}}, stated {{.Stated.Format "2006-01-02"}}, until {{.Until}}{{if .PastItsDate}} (PAST ITS DATE: no longer holds){{end}}{{else}}
None.{{end}}

## CSAF documents
{{range .CSAF}}
- {{.ID}} ({{.Category}}, csaf/{{.File}}): {{range $i, $c := .Covers}}{{if $i}}; {{end}}{{md $c}}{{end}}{{else}}
None.{{end}}
`
