package review

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/reloader-dev/reloader/internal/strict"
	"github.com/reloader-dev/reloader/release"
)

// PredicateType is the in-toto predicate type of the signed review the
// release pipeline attests on each image index.
const PredicateType = "https://reloader.dev/review/v1"

// SignedVerification is the verification line of the signed review: the
// review states what signs it, not who checked it (that differs for every
// reader, and a signed document cannot name its own checker).
const SignedVerification = "the release pipeline signed this review as attestation " + PredicateType +
	" on each image index; reloader-mirror review --verify recomputes it from the release and checks it is this one"

// maxAttestationBytes bounds a signed review: a real one is a few hundred
// KiB (one row per component).
const maxAttestationBytes = 16 << 20

// Attestation is the predicate of the signed review: the review as
// review.json holds it, and the sha256 of the page rendered from it, so a
// reviewer can show that the page they approved is the release's.
type Attestation struct {
	Review     *Review `json:"review"`
	HTMLDigest string  `json:"htmlDigest"`
}

// BuildSigned makes the review the release signs. It is a function of the
// release alone: the signed lock (less its signatures and attestations,
// which do not exist yet when the pipeline makes it), the SBOMs, the
// verified provenance and the licence policy. What differs between readers
// is left out: who verified it and how, the lock's own digest (the lock
// lists this attestation, so cannot be named in it), a gate report or
// release policy given beside the release, the reader's --profile, and
// today's date (exceptions are judged at the release's creation).
func BuildSigned(in Input) (*Review, error) {
	if in.Lock == nil {
		return nil, errors.New("building the signed review: no release lock")
	}
	in.Identity = Identity{Signer: DescribeSigner(in.Lock.Signer), Verification: SignedVerification}
	in.Gate, in.ReleasePolicy, in.Now, in.Signed = nil, nil, in.Lock.Created, true
	// The release signs the review under the default profile; a reader's
	// --profile is a check of their own, like a gate report given beside.
	in.Profile = DefaultProfile
	return Build(in)
}

// DescribeSigner names the signer the lock declares: the public key's
// sha256 fingerprint (as reloader-mirror prints it), or the keyless identity.
func DescribeSigner(s release.Signer) string {
	if !s.Keyless() {
		// The fingerprint is of the key's DER encoding (trust.KeyFingerprint),
		// which is what a PEM public key block holds.
		b, _ := pem.Decode([]byte(s.PublicKey))
		if b == nil {
			return "public key (unreadable)"
		}
		if _, err := x509.ParsePKIXPublicKey(b.Bytes); err != nil {
			return "public key (unreadable)"
		}
		return fmt.Sprintf("public key sha256:%x", sha256.Sum256(b.Bytes))
	}
	id := s.Identity
	if id == "" {
		id = "~" + s.IdentityRegexp
	}
	return "keyless identity " + id + " from " + s.Issuer
}

// NewAttestation renders the signed review's page and returns the
// predicate to attest and the page whose digest it carries.
func NewAttestation(r *Review) (predicate, html []byte, err error) {
	html, err = r.HTML(nil)
	if err != nil {
		return nil, nil, err
	}
	predicate, err = json.Marshal(Attestation{Review: r, HTMLDigest: fmt.Sprintf("sha256:%x", sha256.Sum256(html))})
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the signed review: %w", err)
	}
	return predicate, html, nil
}

// ParseAttestation reads a signed review's predicate strictly: what it says
// is compared field by field with a recomputation, so an unknown field or a
// duplicate key is an error, not something skipped.
func ParseAttestation(data []byte) (*Attestation, error) {
	if err := strict.NoDuplicateKeys(data, "the signed review"); err != nil {
		return nil, err
	}
	var a Attestation
	if err := strict.JSON(data, "the signed review", maxAttestationBytes, &a); err != nil {
		return nil, err
	}
	if a.Review == nil {
		return nil, errors.New("the signed review has no review")
	}
	if a.Review.Schema != Schema {
		return nil, fmt.Errorf("the signed review has schema %q, want %q", a.Review.Schema, Schema)
	}
	if len(a.HTMLDigest) != len("sha256:")+64 || a.HTMLDigest[:7] != "sha256:" {
		return nil, fmt.Errorf("the signed review's htmlDigest %q is not a sha256 digest", a.HTMLDigest)
	}
	return &a, nil
}

// FirstDifference compares two JSON documents and returns the path of the
// first value that differs ("review.components[3].version"), in key order,
// with both values; "" when they are equal.
func FirstDifference(signed, recomputed []byte) (string, error) {
	var a, b any
	if err := decodeNumbers(signed, &a); err != nil {
		return "", fmt.Errorf("decoding the signed review: %w", err)
	}
	if err := decodeNumbers(recomputed, &b); err != nil {
		return "", fmt.Errorf("decoding the recomputed review: %w", err)
	}
	return firstDifference("", a, b), nil
}

func decodeNumbers(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	return d.Decode(v)
}

// firstDifference walks two decoded JSON values in step and names the first
// path where they differ. It stays one switch over the JSON kinds because
// the path it reports is built as it descends.
func firstDifference(at string, a, b any) string {
	show := func(v any) string {
		if v == nil {
			return "absent"
		}
		out, _ := json.Marshal(v)
		if len(out) > 120 {
			out = append(out[:117:117], "..."...)
		}
		return string(out)
	}
	differ := func() string {
		where := at
		if where == "" {
			where = "(the whole document)"
		}
		return fmt.Sprintf("%s: signed %s, recomputed %s", where, show(a), show(b))
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return differ()
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		names := make([]string, 0, len(keys))
		for k := range keys {
			names = append(names, k)
		}
		// The page's digest follows from the review: a difference in the
		// review is the one worth naming.
		sort.Slice(names, func(i, j int) bool {
			if (names[i] == "htmlDigest") != (names[j] == "htmlDigest") {
				return names[j] == "htmlDigest"
			}
			return names[i] < names[j]
		})
		for _, k := range names {
			p := k
			if at != "" {
				p = at + "." + k
			}
			if d := firstDifference(p, x[k], y[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		y, ok := b.([]any)
		if !ok {
			return differ()
		}
		for i := 0; i < len(x) || i < len(y); i++ {
			var xi, yi any
			if i < len(x) {
				xi = x[i]
			}
			if i < len(y) {
				yi = y[i]
			}
			if d := firstDifference(at+"["+strconv.Itoa(i)+"]", xi, yi); d != "" {
				return d
			}
		}
		return ""
	}
	if fmt.Sprintf("%T %v", a, a) != fmt.Sprintf("%T %v", b, b) {
		return differ()
	}
	return ""
}

// Mismatch is a signed review that is not the review of the release it is
// attested on: Subject names the index, Difference the first field.
type Mismatch struct {
	Subject    string
	Difference string
}

func (m *Mismatch) Error() string {
	return fmt.Sprintf("the signed review on %s is not this release's review: first difference at %s", m.Subject, m.Difference)
}

// CheckSigned holds a verified in-toto statement carrying a signed review
// to the review recomputed from in: the statement must be about the index
// digest (subject names it in errors), its predicate must parse, and it
// must equal, field for field, what BuildSigned and NewAttestation make of
// in. The signature is the caller's to have verified.
func CheckSigned(statement []byte, digest, subject string, in Input) (*Attestation, error) {
	var st struct {
		PredicateType string `json:"predicateType"`
		Subject       []struct {
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
		Predicate json.RawMessage `json:"predicate"`
	}
	if err := json.Unmarshal(statement, &st); err != nil {
		return nil, fmt.Errorf("the signed review on %s: decoding the statement: %w", subject, err)
	}
	if st.PredicateType != PredicateType {
		return nil, fmt.Errorf("the signed review on %s: predicate type %q, want %q", subject, st.PredicateType, PredicateType)
	}
	if len(st.Subject) != 1 || "sha256:"+st.Subject[0].Digest["sha256"] != digest {
		return nil, fmt.Errorf("the signed review on %s is not about %s", subject, digest)
	}
	a, err := ParseAttestation(st.Predicate)
	if err != nil {
		return nil, fmt.Errorf("the signed review on %s: %w", subject, err)
	}
	r, err := BuildSigned(in)
	if err != nil {
		return nil, err
	}
	want, _, err := NewAttestation(r)
	if err != nil {
		return nil, err
	}
	d, err := FirstDifference(st.Predicate, want)
	if err != nil {
		return nil, fmt.Errorf("the signed review on %s: %w", subject, err)
	}
	if d != "" {
		return nil, &Mismatch{Subject: subject, Difference: d}
	}
	return a, nil
}
