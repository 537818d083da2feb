package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/release/trust"
)

// During a key rotation reloader-mirror takes both keys, the old one with a
// window judged by this machine's clock: a release signed by the old key is
// verified and copied inside the window and refused after it, naming the
// key and the date, before anything is pushed; the new key's release
// verifies either way; the report names the key that verified. Admission
// policies cannot expire a key, so policy refuses several keys.
func TestMirrorAcceptsARotatedOutKeyOnlyWithinItsWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, oldSigner, oldPub, oldLock := keySignedRelease(t, ctx, startRegistry(t), 51)
	_, newSigner, newPub, newLock := keySignedRelease(t, ctx, startRegistry(t), 52)
	fp := func(s interface{ PublicKeyPEM() []byte }) string {
		k, err := trust.ParsePublicKey(s.PublicKeyPEM())
		if err != nil {
			t.Fatal(err)
		}
		return trust.KeyFingerprint(k)
	}
	oldFP, newFP := fp(oldSigner), fp(newSigner)
	future := time.Now().UTC().AddDate(0, 1, 0).Format(time.RFC3339)
	past := time.Now().UTC().AddDate(0, 0, -2).Format(time.DateOnly)
	inWindow := []string{"--key", newPub, "--key", oldPub + ",not-after=" + future}
	afterWindow := []string{"--key", newPub, "--key", oldPub + ",not-after=" + past}
	verifiedBy := func(lock string, keys []string) (int, string, string) {
		t.Helper()
		code, out, errs := runCLI(t, append([]string{"verify", "--lock", lock, "--allow-unscanned", "--allow-no-provenance", "-o", "json"}, keys...)...)
		var res trust.Result
		if code == cli.ExitOK {
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("verify output: %v: %s", err, out)
			}
		}
		return code, res.Lock.Signer.KeySHA256, errs
	}

	if code, by, errs := verifiedBy(oldLock, inWindow); code != cli.ExitOK || by != oldFP {
		t.Errorf("the old key's release inside its window: exit %d, verified by %q, want 0 and %s: %s", code, by, oldFP, errs)
	}
	if code, _, errs := verifiedBy(oldLock, afterWindow); code != cli.ExitRefused || !strings.Contains(errs, oldFP) || !strings.Contains(errs, past+"T23:59:59Z") {
		t.Errorf("the old key's release after its window: exit %d, want %d naming the key and the date: %s", code, cli.ExitRefused, errs)
	}
	for _, keys := range [][]string{inWindow, afterWindow} {
		if code, by, errs := verifiedBy(newLock, keys); code != cli.ExitOK || by != newFP {
			t.Errorf("the new key's release: exit %d, verified by %q, want 0 and %s: %s", code, by, newFP, errs)
		}
	}

	dst := startRegistry(t)
	copyArgs := func(target string, keys []string) []string {
		return append([]string{"copy", "--lock", oldLock, "--allow-unscanned", "--allow-no-provenance", "--target", dst.Host + "/" + target}, keys...)
	}
	if code, _, errs := runCLI(t, copyArgs("inside", inWindow)...); code != cli.ExitOK {
		t.Errorf("copy of the old key's release inside its window: exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI(t, copyArgs("after", afterWindow)...); code != cli.ExitRefused || !strings.Contains(errs, "rotated out") {
		t.Errorf("copy of the old key's release after its window: exit %d, want %d: %s", code, cli.ExitRefused, errs)
	}
	reg, err := name.NewRegistry(dst.Host)
	if err != nil {
		t.Fatal(err)
	}
	repos, err := remote.Catalog(ctx, reg)
	if err != nil {
		t.Fatal(err)
	}
	var inside, after []string
	for _, r := range repos {
		switch {
		case strings.HasPrefix(r, "inside/"):
			inside = append(inside, r)
		case strings.HasPrefix(r, "after/"):
			after = append(after, r)
		}
	}
	if len(inside) == 0 || len(after) > 0 {
		t.Errorf("repositories of the copy inside the window %v (want some), of the refused copy %v (want none)", inside, after)
	}

	if code, _, errs := runCLI(t, append([]string{"policy", "--lock", newLock, "--allow-unscanned", "--allow-no-provenance", "--target", dst.Host + "/inside"}, inWindow...)...); code != cli.ExitUsage || !strings.Contains(errs, "admission policies cannot expire a key") {
		t.Errorf("policy with two keys: exit %d, want %d: %s", code, cli.ExitUsage, errs)
	}
}
