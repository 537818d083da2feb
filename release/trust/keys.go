package trust

import (
	"crypto"
	"fmt"
	"strings"
	"time"

	"github.com/reloader-dev/reloader/release"
)

// TrustedKey is a public key the policy accepts. A key being rotated out
// keeps being accepted until NotAfter, by the verifier's clock, so that
// consumers can take the new key before the publisher signs with it and
// nobody has to change both sides at the same moment.
type TrustedKey struct {
	Key crypto.PublicKey
	// NotAfter, when set, is the last instant the key is accepted.
	NotAfter time.Time
	// Source says where the key came from (its file), for reports.
	Source string
}

// KeyFile names a PEM public key and the window it is accepted in.
type KeyFile struct {
	Path     string
	NotAfter time.Time
}

// KeySummary is one accepted key in a report.
type KeySummary struct {
	SHA256   string     `json:"sha256"`
	NotAfter *time.Time `json:"notAfter,omitempty"`
	Source   string     `json:"source,omitempty"`
}

// TrustedKeys are every key the policy accepts: PublicKey (no window)
// first, then Keys.
func (p Policy) TrustedKeys() []TrustedKey {
	var ks []TrustedKey
	if p.PublicKey != nil {
		ks = append(ks, TrustedKey{Key: p.PublicKey})
	}
	return append(ks, p.Keys...)
}

func (p Policy) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// rotating: the policy accepts several keys or windows one, so every
// verification first decides which key applies and whether it still does.
func (p Policy) rotating() bool {
	ks := p.TrustedKeys()
	return len(ks) > 1 || (len(ks) == 1 && !ks[0].NotAfter.IsZero())
}

func (p Policy) validateKeys() error {
	seen := map[string]bool{}
	for _, k := range p.TrustedKeys() {
		if k.Key == nil {
			return policyErr(fmt.Sprintf("an accepted key (%s) has no public key", k.Source))
		}
		fp := KeyFingerprint(k.Key)
		if seen[fp] {
			return policyErr(fmt.Sprintf("key sha256:%s is given twice", fp))
		}
		seen[fp] = true
	}
	return nil
}

func (p Policy) keySummary() Summary {
	ks := p.TrustedKeys()
	s := Summary{Mode: "key"}
	if len(ks) == 1 {
		s.KeySHA256 = KeyFingerprint(ks[0].Key)
	}
	if p.rotating() {
		for _, k := range ks {
			s.Keys = append(s.Keys, k.summary())
		}
	}
	return s
}

func (k TrustedKey) summary() KeySummary {
	ks := KeySummary{SHA256: KeyFingerprint(k.Key), Source: k.Source}
	if !k.NotAfter.IsZero() {
		t := k.NotAfter.UTC()
		ks.NotAfter = &t
	}
	return ks
}

// current refuses a key whose window has closed, naming the key and the
// date, so the operator sees a rotation ran out rather than a bad signature.
func (k TrustedKey) current(now time.Time) error {
	if !k.NotAfter.IsZero() && now.After(k.NotAfter) {
		return fmt.Errorf("%w: key sha256:%s was accepted only until %s (it is now %s): it was rotated out; "+
			"the release must be signed with a current key, or the policy must extend the key's window",
			ErrUntrusted, KeyFingerprint(k.Key), k.NotAfter.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return nil
}

// keyFor is the accepted key the lock names as its signer, if it is still
// accepted: the lock is signed, so a trusted key cannot make users expect
// another.
func (p Policy) keyFor(s release.Signer) (TrustedKey, error) {
	if s.PublicKey == "" {
		return TrustedKey{}, fmt.Errorf("%w: the lock expects keyless signer %q but the policy trusts %s", ErrUntrusted, s.Identity+s.IdentityRegexp, p.keyList())
	}
	k, err := ParsePublicKey([]byte(s.PublicKey))
	if err != nil {
		return TrustedKey{}, fmt.Errorf("%w: the lock's signer key: %w", ErrUntrusted, err)
	}
	fp := KeyFingerprint(k)
	for _, tk := range p.TrustedKeys() {
		if KeyFingerprint(tk.Key) == fp {
			return tk, tk.current(p.now())
		}
	}
	return TrustedKey{}, fmt.Errorf("%w: the lock names signer key sha256:%s but the policy trusts %s", ErrUntrusted, fp, p.keyList())
}

func (p Policy) keyList() string {
	var fps []string
	for _, k := range p.TrustedKeys() {
		fps = append(fps, "sha256:"+KeyFingerprint(k.Key))
	}
	if len(fps) == 1 {
		return "key " + fps[0]
	}
	return "keys " + strings.Join(fps, ", ")
}
