package trust_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/release/trust"
)

// rotation is a policy during a key rotation: the new key, and the old one
// accepted until the end of January 2027, judged by a clock the test sets.
func rotation(t *testing.T, old, cur keySigner, now time.Time) trust.Policy {
	t.Helper()
	return trust.Policy{
		Keys: []trust.TrustedKey{
			{Key: cur.policy.PublicKey, Source: "new.pub"},
			{Key: old.policy.PublicKey, Source: "old.pub", NotAfter: time.Date(2027, 1, 31, 23, 59, 59, 0, time.UTC)},
		},
		Now: func() time.Time { return now },
	}
}

func TestDuringARotationTheOldKeyIsAcceptedUntilItsWindowCloses(t *testing.T) {
	old, cur, stranger := newKeySigner(t), newKeySigner(t), newKeySigner(t)
	oldLock, oldBundle := signedLock(t, old.signer, lockFor(old.signer.Identity()))
	newLock, newBundle := signedLock(t, cur.signer, lockFor(cur.signer.Identity()))
	inside, after := time.Date(2027, 1, 15, 0, 0, 0, 0, time.UTC), time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC)
	oldFP, newFP := trust.KeyFingerprint(old.policy.PublicKey), trust.KeyFingerprint(cur.policy.PublicKey)

	t.Run("a release signed by the old key inside its window verifies, and says the old key verified it", func(t *testing.T) {
		_, res, err := verifier(t, rotation(t, old, cur, inside)).Lock(oldLock, oldBundle)
		if err != nil {
			t.Fatalf("Lock: %v", err)
		}
		if res.Signer.KeySHA256 != oldFP || len(res.Signer.Keys) != 2 || res.Signer.Keys[1].NotAfter == nil {
			t.Fatalf("signer %+v, want the old key %s named as the one that verified, and both keys listed", res.Signer, oldFP)
		}
	})
	t.Run("after the window the old key is refused, naming the key and the date", func(t *testing.T) {
		_, _, err := verifier(t, rotation(t, old, cur, after)).Lock(oldLock, oldBundle)
		if !errors.Is(err, trust.ErrUntrusted) || !strings.Contains(err.Error(), oldFP) || !strings.Contains(err.Error(), "2027-01-31T23:59:59Z") {
			t.Fatalf("Lock = %v, want a refusal naming sha256:%s and its not-after", err, oldFP)
		}
	})
	t.Run("a release signed by the new key verifies after the old key's window", func(t *testing.T) {
		_, res, err := verifier(t, rotation(t, old, cur, after)).Lock(newLock, newBundle)
		if err != nil || res.Signer.KeySHA256 != newFP {
			t.Fatalf("Lock = %+v, %v, want verified by %s", res.Signer, err, newFP)
		}
	})
	t.Run("a key the policy does not name is refused, the error listing the accepted keys", func(t *testing.T) {
		l, b := signedLock(t, stranger.signer, lockFor(stranger.signer.Identity()))
		_, _, err := verifier(t, rotation(t, old, cur, inside)).Lock(l, b)
		if !errors.Is(err, trust.ErrUntrusted) || !strings.Contains(err.Error(), oldFP) || !strings.Contains(err.Error(), newFP) {
			t.Fatalf("Lock = %v, want ErrUntrusted naming both accepted keys", err)
		}
	})
	t.Run("a lock signed by the new key but naming the old one as its signer is refused", func(t *testing.T) {
		l, b := signedLock(t, cur.signer, lockFor(old.signer.Identity()))
		if _, _, err := verifier(t, rotation(t, old, cur, inside)).Lock(l, b); !errors.Is(err, trust.ErrUntrusted) {
			t.Fatalf("Lock = %v, want ErrUntrusted", err)
		}
	})
	t.Run("the same key given twice is a policy error", func(t *testing.T) {
		p := rotation(t, old, cur, inside)
		p.PublicKey = cur.policy.PublicKey
		if _, err := trust.NewVerifier(p); !errors.Is(err, trust.ErrPolicy) {
			t.Fatalf("NewVerifier = %v, want ErrPolicy", err)
		}
	})
}
