package sbom

import (
	"encoding/base64"
	"encoding/hex"
	"runtime/debug"
	"strings"

	"github.com/anchore/syft/syft/pkg"
	"github.com/anchore/syft/syft/sbom"
)

// What the documents say beyond what syft writes, so they carry the
// minimum elements of NTIA 2021, CISA 2025 and what of BSI TR-03183-2 the
// build information holds (review/profile.go checks them).
const (
	// Lifecycle is the CycloneDX lifecycle phase of our SBOMs: syft
	// catalogues the image the build produced, before it is published.
	Lifecycle = "post-build"
	// GenerationContext is the SPDX creation comment saying the same,
	// SPDX 2.3 having no lifecycle field.
	GenerationContext = "Generation context: post-build. Catalogued by syft from the built image, before it was published, by the release pipeline."
	// HashOfProperty is the CycloneDX property (and the SPDX package
	// comment says the same) of a hash that is the binary's a module is
	// compiled into: the standard library and the main module have no
	// module hash in the build information, and the binary is the only
	// form they are delivered in.
	HashOfProperty = "reloader.dev:hash-of"
)

// syftVersion is the version of the syft library linked into this binary,
// "" when the build information does not say (then no version is written
// rather than a guessed one).
func syftVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, m := range bi.Deps {
		if m.Path == "github.com/anchore/syft" {
			if m.Replace != nil {
				return m.Replace.Version
			}
			return m.Version
		}
	}
	return ""
}

// h1SHA256 turns a go.sum "h1:" hash into the hex SHA-256 it encodes, ""
// for anything else.
func h1SHA256(h1 string) string {
	b64, ok := strings.CutPrefix(h1, "h1:")
	if !ok {
		return ""
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(b) != 32 {
		return ""
	}
	return hex.EncodeToString(b)
}

// builtFromNoModule reports the Go components that have no module hash by
// nature: the standard library and the module the binary was built from.
func builtFromNoModule(purl, mainModule string) bool {
	mod := goModulePath(purl)
	return mod == "stdlib" || mod != "" && mod == mainModule
}

// completeCycloneDX writes the generation context, both tools, the Go
// module and RPM hashes and the image's relationship to its top-level
// components.
func completeCycloneDX(doc map[string]any, opts Options, rpmMD5 map[string]string) {
	md, _ := doc["metadata"].(map[string]any)
	if md == nil {
		return
	}
	md["lifecycles"] = []any{map[string]any{"phase": Lifecycle}}
	if tools, ok := md["tools"].(map[string]any); ok {
		comps, _ := tools["components"].([]any)
		for _, c := range comps {
			// syft names its own vendor as the author of whatever tool
			// name it is given.
			if t, ok := c.(map[string]any); ok && t["name"] == "reloader-release" && opts.Producer != "" {
				t["author"] = opts.Producer
			}
		}
		if v := syftVersion(); v != "" {
			comps = append(comps, map[string]any{"type": "application", "author": "anchore", "name": "syft", "version": v})
		}
		tools["components"] = comps
	}
	comps, _ := doc["components"].([]any)
	fileHash := map[string]string{}
	for _, c := range comps {
		comp, _ := c.(map[string]any)
		if comp["type"] == "file" {
			if h := cdxSHA256(comp); h != "" {
				fileHash[str(comp["name"])] = h
			}
		}
	}
	mainModule := ""
	depended := map[string]bool{}
	deps, _ := doc["dependencies"].([]any)
	for _, d := range deps {
		dep, _ := d.(map[string]any)
		on, _ := dep["dependsOn"].([]any)
		for _, o := range on {
			depended[str(o)] = true
		}
	}
	var top []any
	for _, c := range comps {
		comp, _ := c.(map[string]any)
		if comp == nil || comp["type"] == "file" {
			continue
		}
		props, _ := comp["properties"].([]any)
		h1, loc := "", ""
		for _, p := range props {
			pm, _ := p.(map[string]any)
			switch str(pm["name"]) {
			case "syft:metadata:h1Digest":
				h1 = str(pm["value"])
			case "syft:location:0:path":
				loc = str(pm["value"])
			case "syft:metadata:mainModule":
				mainModule = str(pm["value"])
			}
		}
		if _, has := comp["hashes"]; !has {
			if h := h1SHA256(h1); h != "" {
				comp["hashes"] = []any{map[string]any{"alg": "SHA-256", "content": h}}
			} else if h := rpmMD5[str(comp["purl"])]; h != "" {
				comp["hashes"] = []any{map[string]any{"alg": "MD5", "content": h}}
			} else if builtFromNoModule(str(comp["purl"]), mainModule) && fileHash[loc] != "" {
				comp["hashes"] = []any{map[string]any{"alg": "SHA-256", "content": fileHash[loc]}}
				comp["properties"] = append(props, map[string]any{"name": HashOfProperty, "value": loc})
			}
		}
		if ref := str(comp["bom-ref"]); ref != "" && !depended[ref] {
			top = append(top, ref)
		}
	}
	// The image contains every component; syft records only what the
	// packages themselves say they depend on.
	if root, _ := md["component"].(map[string]any); root != nil && str(root["bom-ref"]) != "" && len(top) > 0 {
		doc["dependencies"] = append(deps, map[string]any{"ref": str(root["bom-ref"]), "dependsOn": top})
	}
}

func cdxSHA256(comp map[string]any) string {
	hs, _ := comp["hashes"].([]any)
	for _, h := range hs {
		if hm, _ := h.(map[string]any); str(hm["alg"]) == "SHA-256" {
			return str(hm["content"])
		}
	}
	return ""
}

// completeSPDX writes the generation context, our producer as the author
// in place of syft's vendor, syft as a tool, the RPM package digests, and
// the hash of the binary the standard library and the main module are
// compiled into (syft writes the other Go modules' go.sum hashes).
func completeSPDX(doc map[string]any, opts Options, rpmMD5 map[string]string) {
	if ci, ok := doc["creationInfo"].(map[string]any); ok {
		ci["comment"] = GenerationContext
		creators, _ := ci["creators"].([]any)
		var out []any
		for _, c := range creators {
			// syft writes its vendor as an author; it did not author this
			// document, the producer did.
			if strings.HasPrefix(str(c), "Organization: Anchore") && opts.Producer != "" {
				c = "Organization: " + opts.Producer
			}
			out = append(out, c)
		}
		if v := syftVersion(); v != "" {
			out = append(out, "Tool: syft-"+v)
		}
		ci["creators"] = out
	}
	fileHash := map[string]string{}
	files, _ := doc["files"].([]any)
	for _, f := range files {
		fm, _ := f.(map[string]any)
		sums, _ := fm["checksums"].([]any)
		for _, s := range sums {
			if sm, _ := s.(map[string]any); str(sm["algorithm"]) == "SHA256" {
				fileHash[str(fm["SPDXID"])] = str(sm["checksumValue"])
			}
		}
	}
	evidentBy := map[string]string{}
	rels, _ := doc["relationships"].([]any)
	for _, r := range rels {
		rm, _ := r.(map[string]any)
		if str(rm["relationshipType"]) == "OTHER" && strings.HasPrefix(str(rm["comment"]), "evident-by") {
			evidentBy[str(rm["spdxElementId"])] = str(rm["relatedSpdxElement"])
		}
	}
	pkgs, _ := doc["packages"].([]any)
	for _, p := range pkgs {
		pkg, _ := p.(map[string]any)
		if pkg == nil || pkg["checksums"] != nil {
			continue
		}
		if h := rpmMD5[spdxPURL(pkg)]; h != "" {
			pkg["checksums"] = []any{map[string]any{"algorithm": "MD5", "checksumValue": h}}
			continue
		}
		if !builtFromNoModule(spdxPURL(pkg), opts.MainModule) {
			continue
		}
		file := evidentBy[str(pkg["SPDXID"])]
		h := fileHash[file]
		if h == "" {
			continue
		}
		pkg["checksums"] = []any{map[string]any{"algorithm": "SHA256", "checksumValue": h}}
		note := "hash of the binary it is compiled into (" + strings.TrimPrefix(str(pkg["sourceInfo"]), "acquired package info from go module information: ") + ")"
		if c := str(pkg["comment"]); c != "" {
			note = c + "; " + note
		}
		pkg["comment"] = note
	}
}

func spdxPURL(pkg map[string]any) string {
	refs, _ := pkg["externalRefs"].([]any)
	for _, r := range refs {
		if ref, ok := r.(map[string]any); ok && strings.EqualFold(str(ref["referenceType"]), "purl") {
			return str(ref["referenceLocator"])
		}
	}
	return ""
}

// fipsModule is the Go Cryptographic Module version the image's Go
// binaries link (their GOFIPS140 build setting, e.g. v1.0.0-c2097c7c), or
// "" when none was built with GOFIPS140.
func fipsModule(s sbom.SBOM) string {
	if s.Artifacts.Packages == nil {
		return ""
	}
	for _, p := range s.Artifacts.Packages.Sorted(pkg.GoModulePkg) {
		md, ok := p.Metadata.(pkg.GolangBinaryBuildinfoEntry)
		if !ok {
			continue
		}
		for _, kv := range md.GoCryptoSettings {
			if v, ok := strings.CutPrefix(kv, "GOFIPS140="); ok {
				return v
			}
		}
	}
	return ""
}

// noteFIPSModule names the Go Cryptographic Module on the standard
// library's SPDX package, which carries it: syft writes the GOFIPS140
// setting as a CycloneDX property of the main module, but SPDX 2.3 has no
// place for it, and an auditor's question is which FIPS module the crypto
// is.
func noteFIPSModule(doc map[string]any, module string) {
	if module == "" {
		return
	}
	pkgs, _ := doc["packages"].([]any)
	for _, p := range pkgs {
		pm, _ := p.(map[string]any)
		if pm == nil || !strings.HasPrefix(spdxPURL(pm), "pkg:golang/stdlib@") {
			continue
		}
		note := "crypto is the Go Cryptographic Module " + module + " (GOFIPS140, FIPS 140-3)"
		if c := str(pm["comment"]); c != "" {
			note = c + "; " + note
		}
		pm["comment"] = note
	}
}
