package provenance

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

var commit = strings.Repeat("ab", 20)

func statement(t testing.TB, subject string, pred []byte) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"_type": StatementType, "predicateType": PredicateType, "predicate": json.RawMessage(pred),
		"subject": []map[string]any{{"name": "r", "digest": map[string]string{"sha256": subject}}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func build() Build {
	return Build{BuilderID: LocalBuilder, Source: "https://github.com/reloader-dev/reloader", Commit: commit, Version: "v1.2.3",
		Platforms: []string{"linux/amd64"}, GoVersion: "go1.26.8", LDFlags: "-s -w", Env: map[string]string{"GOOS": "linux"},
		SourceDateEpoch: time.Unix(1796040000, 0), Modules: []Module{{Path: "k8s.io/api", Version: "v0.37.2", Sum: "h1:abc="}},
		Base: &Image{Ref: "registry.access.redhat.com/ubi9/ubi-minimal", Digest: "sha256:" + strings.Repeat("1", 64)}}
}

func TestAPredicateReadsBackAsWritten(t *testing.T) {
	pred, err := Predicate(build())
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Predicate(build())
	if string(pred) != string(again) {
		t.Fatal("the same build gave two different predicates")
	}
	st, err := Parse(statement(t, strings.Repeat("2", 64), pred))
	if err != nil {
		t.Fatal(err)
	}
	want := Summary{Builder: LocalBuilder, Source: "https://github.com/reloader-dev/reloader", Commit: commit, GoVersion: "go1.26.8"}
	if st.Summary() != want || st.Subjects[0] != "sha256:"+strings.Repeat("2", 64) || st.Param("sourceDateEpoch") != "1796040000" {
		t.Fatalf("read back %+v %v", st.Summary(), st.Subjects)
	}
}

func TestParseRefusesWhatIsNotSLSAProvenance(t *testing.T) {
	pred, _ := Predicate(build())
	good := string(statement(t, strings.Repeat("2", 64), pred))
	cases := map[string]string{
		"another predicate type":     strings.Replace(good, PredicateType, "https://spdx.dev/Document", 1),
		"a subject without sha256":   strings.Replace(good, `"sha256":"`+strings.Repeat("2", 64), `"sha512":"`+strings.Repeat("2", 128), 1),
		"no builder":                 strings.Replace(good, `"id":"reloader-release local"`, `"id":""`, 1),
		"an unknown predicate field": strings.Replace(good, `"buildDefinition":`, `"bogus":1,"buildDefinition":`, 1),
		"a source that disagrees":    strings.Replace(good, `"uri":"git+https://github.com/reloader-dev/reloader@`, `"uri":"git+https://evil.example/r@`, 1),
		"not JSON":                   "{",
		"another statement type":     strings.Replace(good, StatementType, "https://example.com/Statement", 1),
	}
	for name, doc := range cases {
		st, err := Parse([]byte(doc))
		if err == nil {
			_, _, err = st.Source()
		}
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzParse(f *testing.F) {
	pred, _ := Predicate(build())
	f.Add(statement(f, strings.Repeat("2", 64), pred))
	f.Add([]byte(`{"_type":"https://in-toto.io/Statement/v1"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := Parse(b)
		if err != nil {
			return
		}
		_, _, _ = st.Source()
		_ = st.Summary()
	})
}

// The go build flags read back in order, as a rebuild passes them; a build
// that names none records those of the releases made before they were
// taken from the binary, so such a release still rebuilds as it was made.
func TestTheBuildFlagsReadBackInOrder(t *testing.T) {
	for _, c := range []struct{ flags, want []string }{
		{[]string{"-trimpath", "-buildvcs=false", "-tags=netgo,osusergo", "-gcflags=all=-dwarf=false"}, nil},
		{nil, []string{"-trimpath", "-buildvcs=false"}},
	} {
		b := build()
		b.Flags = c.flags
		pred, err := Predicate(b)
		if err != nil {
			t.Fatal(err)
		}
		st, err := Parse(statement(t, strings.Repeat("2", 64), pred))
		if err != nil {
			t.Fatal(err)
		}
		want := c.want
		if want == nil {
			want = c.flags
		}
		if got := st.Flags(); !slices.Equal(got, want) {
			t.Errorf("built with %q: the provenance reads back %q, want %q", c.flags, got, want)
		}
	}
}
