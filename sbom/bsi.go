package sbom

import (
	"path"
	"strings"

	"golang.org/x/mod/module"
)

// The CycloneDX properties BSI TR-03183-2 v2.1.0 names for the component
// facts CycloneDX has no field for (its CycloneDX property taxonomy, the
// "bsi" namespace), and ours.
const (
	PropertyFilename   = "bsi:component:filename"
	PropertyExecutable = "bsi:component:executable"
	PropertyArchive    = "bsi:component:archive"
	PropertyStructured = "bsi:component:structured"
	// CreatorDerivedProperty marks a component creator whose URL is
	// derived (from the module path, or the distribution's os-release),
	// not declared by the creator, as DerivedProperty marks a supplier.
	CreatorDerivedProperty = "reloader.dev:creator-derived"
	// DeployedInProperty is the path of the file a component is deployed
	// in: the binary a Go module is compiled into.
	DeployedInProperty = "reloader.dev:deployed-in"
)

// describeDeployables writes what BSI TR-03183-2 v2.1.0 asks of each
// component beyond what syft writes: its creator with a contact, its file
// name and the executable, archive and structured properties of that file,
// the URI and SHA-512 of the file it is deployed in (the image layer, as
// the registry serves it), the URI of its source, and its original
// (declared) and concluded licences apart. What cannot be known is left
// out, never guessed, and the review names what is missing.
func describeDeployables(doc map[string]any, opts Options, dep deployables) {
	md, _ := doc["metadata"].(map[string]any)
	if md == nil {
		return
	}
	if org := producer(opts); org != nil {
		md["manufacturer"] = org
	}
	comps, _ := doc["components"].([]any)
	distro := distroURL(comps)
	for _, c := range comps {
		comp, _ := c.(map[string]any)
		if comp == nil || comp["type"] == "file" || comp["type"] == "operating-system" {
			continue
		}
		purl, props := str(comp["purl"]), propertyValues(comp)
		loc := props["syft:location:0:path"]
		switch {
		case goModulePath(purl) != "":
			describeGoComponent(comp, purl, loc, opts, dep)
		case strings.HasPrefix(purl, "pkg:rpm/"):
			describeRPM(comp, purl, props, distro)
		}
		if lf, ok := dep.layers[props["syft:location:0:layerID"]]; ok && opts.Repository != "" {
			addReference(comp, map[string]any{"type": "distribution", "url": blobURL(opts.Repository, lf.Digest),
				"comment": "the image layer that delivers it, as the registry serves it",
				"hashes":  []any{map[string]any{"alg": "SHA-512", "content": lf.SHA512}}})
		}
		acknowledgeLicences(comp)
	}
}

// producer is the SBOM's and the main module's creator: the producer and
// the security contact the release configuration declares.
func producer(opts Options) map[string]any {
	if opts.Producer == "" || opts.ProducerURL == "" && opts.ProducerEmail == "" {
		return nil
	}
	org := map[string]any{"name": opts.Producer}
	if opts.ProducerURL != "" {
		org["url"] = []any{opts.ProducerURL}
	}
	if opts.ProducerEmail != "" {
		org["contact"] = []any{map[string]any{"name": opts.Producer, "email": opts.ProducerEmail}}
	}
	return org
}

// describeGoComponent: a Go module is deployed compiled into a binary, so
// its file is that binary (executable, no archive, and structured: its
// build information lists the modules in it, which is how syft found
// them). The binary's own SHA-512 goes on the components that have no
// module hash of their own (the main module and the standard library).
func describeGoComponent(comp map[string]any, purl, loc string, opts Options, dep deployables) {
	mod := goModulePath(purl)
	if loc != "" {
		addProperties(comp, PropertyFilename, path.Base(loc), PropertyExecutable, "executable",
			PropertyArchive, "no archive", PropertyStructured, "structured", DeployedInProperty, loc)
		if h := dep.binaries[loc]; h != "" && builtFromNoModule(purl, opts.MainModule) {
			hs, _ := comp["hashes"].([]any)
			comp["hashes"] = append(hs, map[string]any{"alg": "SHA-512", "content": h})
		}
	}
	version := str(comp["version"])
	switch {
	case opts.MainModule != "" && (mod == opts.MainModule || strings.HasPrefix(mod, opts.MainModule+"/")):
		if org := producer(opts); org != nil {
			comp["manufacturer"] = org
		}
		if opts.SourceURI != "" {
			addReference(comp, map[string]any{"type": "source-distribution", "url": opts.SourceURI})
		}
		if opts.SecurityTxt != "" {
			addReference(comp, map[string]any{"type": "rfc-9116", "url": opts.SecurityTxt})
		}
	case mod == "stdlib":
		comp["manufacturer"] = map[string]any{"name": "Go", "url": []any{"https://go.dev"}}
		addProperties(comp, CreatorDerivedProperty, "true")
		if v := strings.TrimPrefix(version, "go"); v != "" && strings.Trim(v, "0123456789.") == "" {
			addReference(comp, map[string]any{"type": "source-distribution", "url": "https://go.dev/dl/go" + v + ".src.tar.gz"})
		}
	default:
		// The module path is the URL its authors chose: https://<path>
		// answers the go command with where the module lives.
		comp["manufacturer"] = map[string]any{"name": ModuleSupplier(mod), "url": []any{"https://" + mod}}
		addProperties(comp, CreatorDerivedProperty, "true")
		if ep, err := module.EscapePath(mod); err == nil {
			if ev, err := module.EscapeVersion(version); err == nil && version != "" && version != "(devel)" && version != "UNKNOWN" {
				addReference(comp, map[string]any{"type": "source-distribution", "url": "https://proxy.golang.org/" + ep + "/@v/" + ev + ".zip"})
			}
		}
	}
}

// describeRPM: an RPM's file is the package it was installed from,
// <name>-<version>-<release>.<arch>.rpm (a cpio archive with a structured
// header); its source the source RPM the database records, as a PURL; its
// creator the distribution, reached at the URL its os-release gives.
func describeRPM(comp map[string]any, purl string, props map[string]string, distro string) {
	name, version := str(comp["name"]), str(comp["version"])
	if _, v, ok := strings.Cut(version, ":"); ok {
		version = v // the epoch is not part of the file name
	}
	if arch := qualifier(purl, "arch"); name != "" && version != "" && arch != "" {
		addProperties(comp, PropertyFilename, name+"-"+version+"."+arch+".rpm", PropertyExecutable, "non-executable",
			PropertyArchive, "archive", PropertyStructured, "structured")
	}
	if src := sourceRPMPURL(purl, props["syft:metadata:sourceRpm"]); src != "" {
		addReference(comp, map[string]any{"type": "source-distribution", "url": src})
	}
	if distro != "" {
		org := map[string]any{"url": []any{distro}}
		if sup, _ := comp["supplier"].(map[string]any); str(sup["name"]) != "" {
			org["name"] = str(sup["name"])
		}
		comp["manufacturer"] = org
		addProperties(comp, CreatorDerivedProperty, "true")
	}
}

// sourceRPMPURL names the source RPM (bash-5.1.8-9.el9.src.rpm) in the
// binary RPM's namespace: pkg:rpm/redhat/bash@5.1.8-9.el9?arch=src.
func sourceRPMPURL(purl, srpm string) string {
	base, ok := strings.CutSuffix(srpm, ".src.rpm")
	rest, isRPM := strings.CutPrefix(purl, "pkg:rpm/")
	ns, _, hasNS := strings.Cut(rest, "/")
	if !ok || !isRPM || !hasNS {
		return ""
	}
	r := strings.LastIndex(base, "-")
	if r <= 0 {
		return ""
	}
	v := strings.LastIndex(base[:r], "-")
	if v <= 0 {
		return ""
	}
	return "pkg:rpm/" + ns + "/" + base[:v] + "@" + base[v+1:] + "?arch=src"
}

// distroURL is where the image's distribution says it is reached: its
// os-release BUG_REPORT_URL, else HOME_URL (syft writes both on the
// operating-system component).
func distroURL(comps []any) string {
	var home string
	for _, c := range comps {
		comp, _ := c.(map[string]any)
		if comp == nil || comp["type"] != "operating-system" {
			continue
		}
		refs, _ := comp["externalReferences"].([]any)
		for _, r := range refs {
			ref, _ := r.(map[string]any)
			switch str(ref["type"]) {
			case "issue-tracker":
				return str(ref["url"])
			case "website":
				home = str(ref["url"])
			}
		}
	}
	return home
}

// acknowledgeLicences keeps the original licence (as the component's
// authors declare it, which syft reads) and the concluded one (under which
// the release distributes it) apart, as CycloneDX 1.6's acknowledgement
// does. The release changes no component's licence, so the concluded
// licence is the declared one; a licence that is no SPDX identifier or
// expression cannot be concluded and is left without one.
func acknowledgeLicences(comp map[string]any) {
	ls, _ := comp["licenses"].([]any)
	var parts []string
	concludable := len(ls) > 0
	for _, l := range ls {
		lm, _ := l.(map[string]any)
		switch {
		case lm == nil:
			concludable = false
		case lm["expression"] != nil:
			lm["acknowledgement"] = "declared"
			parts = append(parts, str(lm["expression"]))
		case lm["license"] != nil:
			lic, _ := lm["license"].(map[string]any)
			if lic == nil {
				concludable = false
				continue
			}
			lic["acknowledgement"] = "declared"
			if id := str(lic["id"]); id != "" {
				parts = append(parts, id)
			} else {
				concludable = false
			}
		}
	}
	if !concludable || len(parts) == 0 {
		return
	}
	if len(parts) > 1 {
		for i, p := range parts {
			if strings.Contains(p, " ") {
				parts[i] = "(" + p + ")"
			}
		}
	}
	comp["licenses"] = append(ls, map[string]any{"expression": strings.Join(parts, " AND "), "acknowledgement": "concluded"})
}

// blobURL is the registry's address of a blob of repository
// ("ghcr.io/reloader-dev/reloader"): the distribution API's blob URL.
func blobURL(repository, digest string) string {
	host, repo, _ := strings.Cut(repository, "/")
	return "https://" + host + "/v2/" + repo + "/blobs/" + digest
}

func propertyValues(comp map[string]any) map[string]string {
	out := map[string]string{}
	props, _ := comp["properties"].([]any)
	for _, p := range props {
		if pm, _ := p.(map[string]any); pm != nil {
			if _, seen := out[str(pm["name"])]; !seen {
				out[str(pm["name"])] = str(pm["value"])
			}
		}
	}
	return out
}

// addProperties appends name, value pairs.
func addProperties(comp map[string]any, kv ...string) {
	props, _ := comp["properties"].([]any)
	for i := 0; i+1 < len(kv); i += 2 {
		props = append(props, map[string]any{"name": kv[i], "value": kv[i+1]})
	}
	comp["properties"] = props
}

func addReference(comp map[string]any, ref map[string]any) {
	refs, _ := comp["externalReferences"].([]any)
	comp["externalReferences"] = append(refs, ref)
}

// qualifier reads one qualifier of a PURL ("arch" of ...?arch=x86_64&...).
func qualifier(purl, key string) string {
	_, q, ok := strings.Cut(purl, "?")
	if !ok {
		return ""
	}
	q, _, _ = strings.Cut(q, "#")
	for _, kv := range strings.Split(q, "&") {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// binarySHA512 gives the SPDX 2.3 packages that carry the hash of the binary
// they are compiled into (the main module and the standard library, which
// have no module hash; completeSPDX wrote its SHA-256) that binary's SHA-512
// too, as the CycloneDX components do: BSI TR-03183-2 v2.1.0 asks for
// SHA-512, and the formats list the same hashes.
func binarySHA512(doc map[string]any, opts Options, dep deployables) {
	pkgs, _ := doc["packages"].([]any)
	for _, p := range pkgs {
		pkg, _ := p.(map[string]any)
		if pkg == nil || !builtFromNoModule(spdxPURL(pkg), opts.MainModule) {
			continue
		}
		sums, _ := pkg["checksums"].([]any)
		if len(sums) == 0 {
			continue
		}
		loc := strings.TrimPrefix(str(pkg["sourceInfo"]), "acquired package info from go module information: ")
		if h := dep.binaries[loc]; h != "" {
			pkg["checksums"] = append(sums, map[string]any{"algorithm": "SHA512", "checksumValue": h})
		}
	}
}
