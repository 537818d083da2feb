// Package spdx3 writes the SPDX 3.0.1 JSON-LD SBOM of a release image from
// its finished SPDX 2.3 document, with the SPDX project's own Go library
// (spdx/tools-golang v0.6's SPDX 3 model and its 2.3 converter). Converting
// the finished document, after everything sbom adds to what syft writes
// (suppliers, hashes, licences, the generation context), keeps the formats
// in agreement by construction: there is one list of components, written
// three ways. What BSI TR-03183-2 v2.1.0 asks beyond SPDX 2.3's fields
// (bsi.go) is handed in as facts read from the finished CycloneDX
// document, and written in SPDX 3's model by the TR's SPDX 3.0.1 mapping.
//
// The library's JSON-LD writer numbers the elements the 2.3 document gives no
// identifier (relationships, agents, licence sets) in the order it walks a
// Go map, so two runs would write different bytes. Every such element gets
// an identifier derived from its content before writing, and the graph is
// written sorted: a release's SBOMs repeat exactly.
package spdx3

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	spdxjson "github.com/spdx/tools-golang/json"
	v3 "github.com/spdx/tools-golang/spdx/v3/v3_0"
)

// MediaType is the IANA media type of SPDX 3 JSON-LD documents
// (https://www.iana.org/assignments/media-types/application/spdx3+json),
// also the OCI artifact type of the published document.
const MediaType = "application/spdx3+json"

// Context is the JSON-LD context every SPDX 3.0.1 document names.
const Context = "https://spdx.org/rdf/3.0.1/spdx-context.jsonld"

// FromSPDX23 converts an SPDX 2.3 JSON document into SPDX 3.0.1 JSON-LD.
// Nothing of the 2.3 document the SBOM profiles read is dropped: packages
// with their versions, PURLs and CPEs, checksums, suppliers, declared and
// concluded licences, files and relationships, the creators and the
// creation comment. What BSI TR-03183-2 v2.1.0 asks beyond SPDX 2.3's
// fields comes in as facts, written in SPDX 3's model (addBSIFields).
func FromSPDX23(spdx23 []byte, facts Facts) ([]byte, error) {
	doc, err := spdxjson.Read(bytes.NewReader(spdx23))
	if err != nil {
		return nil, fmt.Errorf("converting to SPDX 3.0.1: reading the SPDX 2.3 document: %w", err)
	}
	if doc == nil {
		return nil, fmt.Errorf("converting to SPDX 3.0.1: the SPDX 2.3 document is empty")
	}
	var out v3.Document
	v3.From_v2_3(*doc, &out)
	// The converter writes licences as ExpandedLicensing objects (3.0's
	// simple licence expression cannot name a LicenseRef).
	out.ProfileConformances = appendMissing(out.ProfileConformances, v3.ProfileIdentifierType_ExpandedLicensing)
	// SPDX 3 has a field for what SPDX 2.3's creation comment says: syft
	// catalogued the built image (CycloneDX's post-build lifecycle).
	for _, root := range out.RootElements {
		if b, ok := root.(*v3.SBOM); ok {
			b.SbomTypes = []v3.SbomType{v3.SbomType_Analyzed}
		}
	}
	if err := addBSIFields(&out, facts); err != nil {
		return nil, fmt.Errorf("converting %s to SPDX 3.0.1: %w", doc.DocumentName, err)
	}
	nameElements(&out)
	var buf bytes.Buffer
	if err := toJSON(&out, &buf); err != nil {
		return nil, fmt.Errorf("converting %s to SPDX 3.0.1: writing JSON-LD: %w", doc.DocumentName, err)
	}
	return canonical(buf.Bytes())
}

// singletonsMu serialises the library's writer over its package-level
// individuals (NOASSERTION and NONE elements and licences, the SPDX
// organisation). ToJSON gives every element without creation information
// the document's, and these are shared by every document the process
// writes: the first document's creation information would stay on them and
// be written into every later one (another creation date, found by a test
// that converts two documents). Each write starts them bare and leaves them
// bare, one document at a time.
var singletonsMu sync.Mutex

func singletons() []v3.AnyElement {
	return []v3.AnyElement{v3.IndividualElement_NoAssertionElement, v3.IndividualElement_NoneElement,
		v3.IndividualLicensingInfo_NoAssertionLicense, v3.IndividualLicensingInfo_NoneLicense, v3.Organization_SpdxOrganization}
}

// withSingletons runs f with the individuals' creation information set to
// ci (nil: bare), and leaves them bare.
func withSingletons(ci v3.AnyCreationInfo, f func() error) error {
	singletonsMu.Lock()
	defer singletonsMu.Unlock()
	set := func(ci v3.AnyCreationInfo) {
		for _, e := range singletons() {
			e.SetCreationInfo(ci)
		}
	}
	set(ci)
	defer set(nil)
	return f()
}

func toJSON(d *v3.Document, w io.Writer) error {
	return withSingletons(nil, func() error { return d.ToJSON(w) })
}

// Validate reads an SPDX 3.0.1 JSON-LD document back with the library and
// runs its validations, generated from the 3.0.1 model's SHACL shapes
// (required properties, cardinalities, value types, enumerations). The
// model's individuals (NOASSERTION, NONE, the SPDX organisation) are
// written by reference, as the specification defines them, so a document
// holds no creation information for them: they are checked with the
// document's.
func Validate(doc []byte) error {
	var d v3.Document
	if err := d.FromJSON(bytes.NewReader(doc)); err != nil {
		return fmt.Errorf("reading the SPDX 3.0.1 document: %w", err)
	}
	return withSingletons(d.CreationInfo, func() error {
		if err := d.Validate(false); err != nil {
			return fmt.Errorf("the SPDX 3.0.1 model's validations: %w", err)
		}
		return nil
	})
}

func appendMissing(have []v3.ProfileIdentifierType, want ...v3.ProfileIdentifierType) []v3.ProfileIdentifierType {
	for _, w := range want {
		if !slices.Contains(have, w) {
			have = append(have, w)
		}
	}
	return have
}

// nameElements gives every element without an identifier one derived from
// its content: its type and a hash of its fields, the elements it refers to
// named by their own identifiers.
func nameElements(d *v3.Document) {
	elems := d.Elements
	k := keyer{memo: map[any]string{}, busy: map[any]bool{}}
	// Keys are computed before any identifier is set, so an element is
	// keyed by what it says and by the identifiers the 2.3 document gave
	// the elements it points at. Two identical elements (the converter
	// makes one supplier Organization per package) get one identifier and
	// are written once (canonical drops the copies).
	ids := make([]string, len(elems))
	for i, e := range elems {
		if e == nil || reflect.ValueOf(e).IsNil() || e.GetID() != "" {
			continue
		}
		sum := sha256.Sum256([]byte(k.key(reflect.ValueOf(e))))
		ids[i] = "SPDXRef-" + reflect.TypeOf(e).Elem().Name() + "-" + hex.EncodeToString(sum[:8])
	}
	for i, id := range ids {
		if id != "" {
			elems[i].SetID(id)
		}
	}
}

// keyer describes a value by its content, for nameElements.
type keyer struct {
	memo map[any]string
	busy map[any]bool
	// shallow leaves out creation information (see structKey).
	shallow bool
}

type identified interface{ GetID() string }

var timeType = reflect.TypeFor[time.Time]()

func (k *keyer) key(v reflect.Value) string {
	if !v.IsValid() {
		return ""
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return ""
		}
		return k.key(v.Elem())
	case reflect.Pointer:
		if v.IsNil() {
			return ""
		}
		if id, ok := v.Interface().(identified); ok && id.GetID() != "" {
			return "@" + id.GetID()
		}
		p := v.Interface()
		if s, ok := k.memo[p]; ok {
			return s
		}
		if s, ok := fileKey(p); ok {
			k.memo[p] = s
			return s
		}
		if k.busy[p] {
			return "@cycle"
		}
		k.busy[p] = true
		s := k.key(v.Elem())
		delete(k.busy, p)
		k.memo[p] = s
		return s
	case reflect.Slice:
		parts := make([]string, 0, v.Len())
		for i := range v.Len() {
			parts = append(parts, k.key(v.Index(i)))
		}
		// Lists are sets in SPDX 3, and some the converter fills from a map.
		slices.Sort(parts)
		return "[" + strings.Join(parts, ",") + "]"
	case reflect.Struct:
		return k.structKey(v)
	}
	return fmt.Sprint(v.Interface())
}

// fileKey keys a file the document says is deployed (a distribution
// artifact with its SHA-512, bsi.go) by its name, purposes and content
// digest, not by the URI it is served from: the same file has one
// identifier whichever registry publishes the release, so two builds of
// one commit into two registries write the same document but for that
// registry's host.
func fileKey(e any) (string, bool) {
	f, ok := e.(*v3.File)
	if !ok {
		return "", false
	}
	for _, m := range f.VerifiedUsing {
		if h, ok := m.(*v3.Hash); ok && h.Algorithm == v3.HashAlgorithm_Sha512 {
			purposes := make([]string, 0, len(f.AdditionalPurposes))
			for _, p := range f.AdditionalPurposes {
				purposes = append(purposes, fmt.Sprint(p))
			}
			slices.Sort(purposes)
			return "File{Name=" + f.Name + ";Purposes=" + strings.Join(purposes, ",") + ";SHA512=" + h.Value + ";}", true
		}
	}
	return "", false
}

func (k *keyer) structKey(v reflect.Value) string {
	t := v.Type()
	if t == timeType {
		return v.Interface().(time.Time).UTC().Format(time.RFC3339Nano)
	}
	// Enumerations (RelationshipType, HashAlgorithm) hold only their IRI.
	p := reflect.New(t)
	p.Elem().Set(v)
	if id, ok := p.Interface().(identified); ok && id.GetID() != "" {
		return "@" + id.GetID()
	}
	var b strings.Builder
	b.WriteString(t.Name() + "{")
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Name == "ID" {
			continue
		}
		fv := v.Field(i)
		if fv.IsZero() {
			continue
		}
		if f.Name == "CreationInfo" {
			// Elements alike but for their creation information (the
			// document's creator and an annotation's annotator, both
			// "Reloader project") are different elements. The creation
			// information names its agents, whose own creation
			// information is it again: within it, agents are keyed by
			// what they say, so the key does not depend on the path
			// taken to the cycle.
			if k.shallow {
				continue
			}
			inner := keyer{memo: map[any]string{}, busy: map[any]bool{}, shallow: true}
			b.WriteString(f.Name + "=" + inner.key(fv) + ";")
			continue
		}
		b.WriteString(f.Name + "=" + k.key(fv) + ";")
	}
	b.WriteString("}")
	return b.String()
}

// canonical sorts the graph by identifier and each collection's element
// list, which the library writes in map order, and writes an element that
// appears more than once (identical copies, see nameElements) once.
func canonical(doc []byte) ([]byte, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("re-reading the SPDX 3.0.1 document: %w", err)
	}
	graph, _ := m["@graph"].([]any)
	if err := nameBlankNodes(graph); err != nil {
		return nil, err
	}
	seen := map[string]any{}
	kept := graph[:0]
	for _, n := range graph {
		id := nodeID(n)
		if was, dup := seen[id]; dup {
			if !reflect.DeepEqual(was, n) {
				return nil, fmt.Errorf("writing SPDX 3.0.1: two different elements are both %s: %v %v", id, was, n)
			}
			continue
		}
		seen[id] = n
		kept = append(kept, n)
		if node, ok := n.(map[string]any); ok {
			if els, ok := node["element"].([]any); ok {
				slices.SortFunc(els, func(a, b any) int { return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
				node["element"] = slices.Compact(els)
			}
		}
	}
	graph = kept
	slices.SortStableFunc(graph, func(a, b any) int { return cmp.Compare(nodeID(a), nodeID(b)) })
	m["@graph"] = graph
	out, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// nameBlankNodes renames the blank nodes (the creation information) by
// their content. The library numbers them as it meets them, and may meet
// one creation information twice (it tells objects apart by reflect.Value,
// which differs by the path taken to the same pointer), so the number a
// node gets, and whether there are one or two, depends on map order.
func nameBlankNodes(graph []any) error {
	renamed := map[string]string{}
	for _, n := range graph {
		node, _ := n.(map[string]any)
		id, _ := node["@id"].(string)
		if !strings.HasPrefix(id, "_:") {
			continue
		}
		content := maps.Clone(node)
		delete(content, "@id")
		b, err := json.Marshal(content)
		if err != nil {
			return fmt.Errorf("writing SPDX 3.0.1: %w", err)
		}
		sum := sha256.Sum256(b)
		renamed[id] = fmt.Sprintf("_:%s-%s", node["type"], hex.EncodeToString(sum[:8]))
	}
	for i, n := range graph {
		graph[i] = rename(n, renamed)
	}
	return nil
}

// rename replaces every string of v that is a key of renamed.
func rename(v any, renamed map[string]string) any {
	switch v := v.(type) {
	case string:
		if to, ok := renamed[v]; ok {
			return to
		}
	case []any:
		for i := range v {
			v[i] = rename(v[i], renamed)
		}
	case map[string]any:
		for k := range v {
			v[k] = rename(v[k], renamed)
		}
	}
	return v
}

// nodeID is a graph node's identifier: spdxId for elements, @id for the
// others (the creation information).
func nodeID(n any) string {
	node, _ := n.(map[string]any)
	if id, ok := node["spdxId"].(string); ok {
		return id
	}
	id, _ := node["@id"].(string)
	return id
}
