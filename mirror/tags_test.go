package mirror

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/mirror/registry"
)

// sigDigest names test layer c.
func sigDigest(c byte) string { return registry.Digest([]byte{c}) }

// cosignStyle is a signature manifest and config as cosign writes them: one
// diff ID and one history entry per layer, the signature in an annotation.
func cosignStyle(layers ...byte) (manifest, config string) {
	var ls, ids, hist []string
	for _, c := range layers {
		ls = append(ls, fmt.Sprintf(`{"mediaType":"application/vnd.dev.cosign.simplesigning.v1+json","size":10,"digest":%q,"annotations":{"dev.cosignproject.cosign/signature":"sig-%c<&>"}}`, sigDigest(c), c))
		ids = append(ids, fmt.Sprintf("%q", sigDigest(c)))
		hist = append(hist, `{"created":"0001-01-01T00:00:00Z"}`)
	}
	config = fmt.Sprintf(`{"architecture":"","created":"0001-01-01T00:00:00Z","history":[%s],"os":"","rootfs":{"type":"layers","diff_ids":[%s]},"config":{}}`,
		strings.Join(hist, ","), strings.Join(ids, ","))
	manifest = fmt.Sprintf(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","size":1,"digest":%q},"layers":[%s]}`,
		sigDigest('c'), strings.Join(ls, ","))
	return manifest, config
}

func decoded(t *testing.T, manifest, config string) signatureManifest {
	t.Helper()
	s := signatureManifest{raw: []byte(manifest), configJSON: []byte(config)}
	if err := s.decode(); err != nil {
		t.Fatal(err)
	}
	return s
}

// The merge is the union of the layers, de-duplicated by digest, the
// release's first and in order; the config's diff IDs and history follow
// the layers, and the signatures' annotations are kept byte for byte.
func TestMergedSignaturesKeepTheReleasesFirstAndTheTargetsOthers(t *testing.T) {
	for _, tc := range []struct {
		name         string
		ours, theirs []byte
		want, kept   string
	}{
		{"countersignature appended", []byte("r"), []byte("ro"), "ro", "o"},
		{"only the organisation's", []byte("r"), []byte("o"), "ro", "o"},
		{"theirs first", []byte("r"), []byte("or"), "ro", "o"},
		{"several, with duplicates", []byte("rs"), []byte("osxr"), "rsox", "ox"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			om, oc := cosignStyle(tc.ours...)
			tm, tcfg := cosignStyle(tc.theirs...)
			m, err := mergeSignatureManifests(decoded(t, om, oc), decoded(t, tm, tcfg))
			if err != nil {
				t.Fatal(err)
			}
			var want, kept []string
			for _, c := range []byte(tc.want) {
				want = append(want, sigDigest(c))
			}
			for _, c := range []byte(tc.kept) {
				kept = append(kept, sigDigest(c))
			}
			if !slices.Equal(m.digests, want) || !slices.Equal(m.kept, kept) {
				t.Errorf("layers %v kept %v, want %v kept %v", m.digests, m.kept, want, kept)
			}
			var cfg struct {
				RootFS struct {
					DiffIDs []string `json:"diff_ids"`
				} `json:"rootfs"`
				History []json.RawMessage
			}
			if err := json.Unmarshal(m.config, &cfg); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cfg.RootFS.DiffIDs, want) || len(cfg.History) != len(want) {
				t.Errorf("config diff_ids %v, %d history entries: want %v", cfg.RootFS.DiffIDs, len(cfg.History), want)
			}
			merged := decoded(t, string(m.manifest), string(m.config))
			if merged.configDigest != m.configDigest || !strings.Contains(string(m.manifest), `"sig-o<&>"`) {
				t.Errorf("manifest does not name its config or re-encoded the signatures:\n%s", m.manifest)
			}
		})
	}
}

// What a target registry holds at a signature tag is outside input: the
// merge never panics on it, and whatever it returns starts with the
// release's layers and repeats no digest.
func FuzzMergeSignatureManifests(f *testing.F) {
	om, oc := cosignStyle('r')
	tm, tc := cosignStyle('o', 'r')
	f.Add(tm, tc)
	f.Add(`{"layers":[{"digest":"`+sigDigest('o')+`"}],"config":{"digest":"`+sigDigest('c')+`"}}`, `{"rootfs":null,"history":{}}`)
	f.Fuzz(func(t *testing.T, manifest, config string) {
		theirs := signatureManifest{raw: []byte(manifest), configJSON: []byte(config)}
		if theirs.decode() != nil {
			return
		}
		ours := decoded(t, om, oc)
		m, err := mergeSignatureManifests(ours, theirs)
		if err != nil {
			return
		}
		if len(m.digests) < len(ours.digests) || !slices.Equal(m.digests[:len(ours.digests)], ours.digests) {
			t.Fatalf("merged layers %v do not start with the release's %v", m.digests, ours.digests)
		}
		seen := map[string]bool{}
		for _, d := range m.digests {
			if seen[d] {
				t.Fatalf("merged layers repeat %s: %v", d, m.digests)
			}
			seen[d] = true
		}
	})
}
