package trust

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
)

const claimDigest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"

// envelope wraps statement as a DSSE envelope, as cosign stores an
// attestation layer.
func envelope(statement string) []byte {
	b, _ := json.Marshal(map[string]any{"payloadType": "application/vnd.in-toto+json",
		"payload": base64.StdEncoding.EncodeToString([]byte(statement)), "signatures": []any{}})
	return b
}

// claimCases are statements on which the two claim verifiers must agree,
// the awkward ones included.
func claimCases() map[string][]byte {
	hex := strings.TrimPrefix(claimDigest, "sha256:")
	return map[string][]byte{
		"about the image":                {}, // filled below
		"about another image":            envelope(`{"subject":[{"digest":{"sha256":"` + strings.Repeat("2", 64) + `"}}],"predicate":{}}`),
		"one of several subjects":        envelope(`{"subject":[{"digest":{"sha256":"` + strings.Repeat("2", 64) + `"}},{"digest":{"sha256":"` + hex + `"}}]}`),
		"a sha512 digest only":           envelope(`{"subject":[{"digest":{"sha512":"` + hex + `"}}]}`),
		"no subject":                     envelope(`{"predicateType":"x","predicate":{"subject":[{"digest":{"sha256":"` + hex + `"}}]}}`),
		"Subject in another case":        envelope(`{"Subject":[{"Digest":{"sha256":"` + hex + `"}}]}`),
		"a repeated subject, last wrong": envelope(`{"subject":[{"digest":{"sha256":"` + hex + `"}}],"subject":[]}`),
		"a repeated subject, last right": envelope(`{"subject":[],"subject":[{"digest":{"sha256":"` + hex + `"}}]}`),
		"subject not an array":           envelope(`{"subject":{"digest":{"sha256":"` + hex + `"}}}`),
		"a digest that is no string":     envelope(`{"subject":[{"digest":{"sha256":1}}]}`),
		"an invalid predicate":           envelope(`{"subject":[{"digest":{"sha256":"` + hex + `"}}],"predicate":{]}`),
		"a statement that is no JSON":    envelope(`not json`),
		"a payload that is no base64":    []byte(`{"payload":"%%%"}`),
		"an envelope that is no JSON":    []byte(`{`),
	}
}

// The cheaper claim check gives cosign's verdict on every statement: only
// how much of the predicate is decoded differs.
func TestSubjectClaimVerifierAgreesWithCosigns(t *testing.T) {
	h, _ := v1.NewHash(claimDigest)
	cases := claimCases()
	cases["about the image"] = envelope(`{"_type":"https://in-toto.io/Statement/v0.1","predicateType":"https://spdx.dev/Document","subject":[{"name":"x","digest":{"sha256":"` + strings.TrimPrefix(claimDigest, "sha256:") + `"}}],"predicate":{"packages":[{"name":"a"}]}}`)
	accepted := 0
	for name, payload := range cases {
		ours, theirs := claimVerdicts(t, payload, h)
		if (ours == nil) != (theirs == nil) {
			t.Errorf("%s: ours %v, cosign's %v", name, ours, theirs)
		}
		if ours == nil {
			accepted++
		}
	}
	if accepted != 4 {
		t.Errorf("%d statements accepted, want 4 (the image, one of several, another case, the last repeated subject)", accepted)
	}
}

func FuzzSubjectClaimVerifierAgreesWithCosigns(f *testing.F) {
	for _, p := range claimCases() {
		f.Add(p)
	}
	h, _ := v1.NewHash(claimDigest)
	f.Fuzz(func(t *testing.T, payload []byte) {
		ours, theirs := claimVerdicts(t, payload, h)
		if (ours == nil) != (theirs == nil) {
			t.Fatalf("payload %q: ours %v, cosign's %v", payload, ours, theirs)
		}
		sameStatement(t, payload, h)
	})
}

// The claim check keeps the statement it decoded, for the Verifier to use
// instead of decoding the envelope again: it must be InTotoStatement's.
func TestTheClaimsStatementIsInTotoStatements(t *testing.T) {
	h, _ := v1.NewHash(claimDigest)
	cases := claimCases()
	cases["about the image"] = envelope(`{"predicateType":"https://spdx.dev/Document","subject":[{"digest":{"sha256":"` + strings.TrimPrefix(claimDigest, "sha256:") + `"}}],"predicate":{}}`)
	for _, payload := range cases {
		sameStatement(t, payload, h)
	}
}

func sameStatement(t *testing.T, payload []byte, h v1.Hash) {
	t.Helper()
	pt, st, err := subjectClaim(payload, h)
	if err != nil {
		return
	}
	wantPT, wantST := InTotoStatement(FormatCosignAttestation, payload)
	if wantST != nil && (pt != wantPT || string(st) != string(wantST)) {
		t.Fatalf("payload %q: the claim kept (%q, %q), InTotoStatement reads (%q, %q)", payload, pt, st, wantPT, wantST)
	}
	if wantST == nil && st != nil && pt == "" {
		t.Fatalf("payload %q: a statement without a predicate type was kept", payload)
	}
}

func claimVerdicts(t *testing.T, payload []byte, h v1.Hash) (ours, theirs error) {
	t.Helper()
	att, err := static.NewAttestation(payload)
	if err != nil {
		t.Fatal(err)
	}
	return (&Verifier{}).subjectClaimVerifier(att, h, nil), cosign.IntotoSubjectClaimVerifier(att, h, nil)
}

// What the claim check decoded is what the Verifier reads back for that
// payload, so a verified attestation's statement is decoded once.
func TestTheClaimCheckKeepsTheStatementForTheVerifier(t *testing.T) {
	h, _ := v1.NewHash(claimDigest)
	payload := envelope(`{"predicateType":"https://spdx.dev/Document","subject":[{"digest":{"sha256":"` + strings.TrimPrefix(claimDigest, "sha256:") + `"}}],"predicate":{}}`)
	att, err := static.NewAttestation(payload)
	if err != nil {
		t.Fatal(err)
	}
	v := &Verifier{}
	if err := v.subjectClaimVerifier(att, h, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := v.statements.Load(parsedKey{FormatCosignAttestation, sha256.Sum256(payload)}); !ok {
		t.Fatal("the claim check kept no statement")
	}
	if pt, st := v.statement(FormatCosignAttestation, payload); pt != "https://spdx.dev/Document" || len(st) == 0 {
		t.Fatalf("statement read back (%q, %q)", pt, st)
	}
}
