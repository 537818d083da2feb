package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release/support"
)

// supportTable writes a support table whose rows end the given number of
// days from now (negative: support has ended).
func supportTable(t *testing.T, ends map[string]int) string {
	t.Helper()
	day := func(d int) string { return time.Now().UTC().AddDate(0, 0, d).Format(time.DateOnly) }
	yaml := "apiVersion: " + support.APIVersion + "\nseries:\n"
	for series, end := range ends {
		yaml += fmt.Sprintf("  - {series: %s, released: %q, endOfSupport: %q}\n", series, day(-400), day(end))
	}
	p := filepath.Join(t.TempDir(), "support.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// keySigner is a key-signing test signer and its public key file.
func keySigner(t *testing.T) (releasetest.Signer, string) {
	t.Helper()
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(t.TempDir(), "cosign.pub")
	if err := os.WriteFile(key, s.PublicKeyPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	return s, key
}

// A release whose series no support table known lists is refused, exit 3,
// naming the release, the rule and --accept-unsupported; with the flag it
// runs, and verify -o json records the warning. The pipeline no longer cuts
// such a release, so v1.3.0's lock is re-signed, by the release's own key,
// with a table listing only v1.0: a release cut before the pipeline
// checked, or by another producer.
func TestAReleaseWhoseSeriesNoSupportTableListsIsRefusedUnlessAccepted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := startRegistry(t)
	s, key := keySigner(t)
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Seed: 23, Version: "v1.3.0"})
	if err != nil {
		t.Fatal(err)
	}
	if rel.Lock.Support, err = support.ReadTable(supportTable(t, map[string]int{"v1.0": 300})); err != nil {
		t.Fatal(err)
	}
	lockJSON, err := rel.Lock.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := s.SignLock(ctx, lockJSON)
	if err != nil {
		t.Fatal(err)
	}
	if err := releasetest.PushLock(ctx, rel.LockRef, lockJSON, bundle); err != nil {
		t.Fatal(err)
	}

	verify := []string{"verify", "--lock-ref", rel.LockRef, "--key", key, "--allow-unscanned", "--allow-no-provenance", "-o", "json"}
	code, _, errs := runCLI(t, verify...)
	if code != cli.ExitRefused || !strings.Contains(errs, "release v1.3.0") || !strings.Contains(errs, "series v1.3 of v1.3.0 is unlisted") ||
		!strings.Contains(errs, "--accept-unsupported") {
		t.Errorf("verify of v1.3.0, unlisted: exit %d, want %d naming the release, the rule and the flag: %s", code, cli.ExitRefused, errs)
	}
	code, out, errs := runCLI(t, append(verify, "--accept-unsupported")...)
	var accepted struct {
		Standing struct {
			Support, Series, SupportFrom string
			UnsupportedAllowed           bool
			Refused                      []string
		}
	}
	if code != cli.ExitOK || json.Unmarshal([]byte(out), &accepted) != nil || accepted.Standing.Support != "unlisted" ||
		accepted.Standing.Series != "v1.3" || accepted.Standing.SupportFrom != "release v1.3.0 (its own lock)" ||
		!accepted.Standing.UnsupportedAllowed || len(accepted.Standing.Refused) != 0 {
		t.Errorf("verify -o json of v1.3.0 with --accept-unsupported does not record the unlisted series: exit %d %s %s", code, out, errs)
	}
}

// Of the release's own table and the newest lock's, the entry that ends the
// series first decides, whichever table holds it: v1.0.0's own table ended
// v1.0 while v1.1.0's, published beside it, still supports it, so v1.0.0 is
// refused by its own; TestAnAdvisoryCarriedByANewerReleaseRefusesTheOlderOneAtImport
// is the other way round (v1.1.0's table ends v1.0, v1.0.0's does not).
func TestTheReleasesOwnSupportTableDecidesWhenItIsStricterThanTheNewest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := startRegistry(t)
	s, key := keySigner(t)
	if _, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Seed: 31, Version: "v1.0.0",
		SupportFile: supportTable(t, map[string]int{"v1.0": -5})}); err != nil {
		t.Fatal(err)
	}
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Seed: 32, Version: "v1.1.0",
		SupportFile: supportTable(t, map[string]int{"v1.1": 300, "v1.0": 100})})
	if err != nil {
		t.Fatal(err)
	}
	v1 := strings.TrimSuffix(rel.LockRef, ":v1.1.0") + ":v1.0.0"
	verify := []string{"verify", "--lock-ref", v1, "--key", key, "--allow-unscanned", "--allow-no-provenance", "-o", "json"}
	code, _, errs := runCLI(t, verify...)
	if code != cli.ExitRefused || !strings.Contains(errs, "series v1.0 of v1.0.0 is past its end of support") ||
		!strings.Contains(errs, "by the support table of release v1.0.0 (its own lock)") || !strings.Contains(errs, "--accept-unsupported") {
		t.Errorf("verify of v1.0.0, ended by its own table only: exit %d, want %d naming its own table and the flag: %s", code, cli.ExitRefused, errs)
	}
	code, out, errs := runCLI(t, append(verify, "--accept-unsupported")...)
	var accepted struct {
		Standing struct {
			Support, SupportFrom string
			Source               struct{ Name string }
			UnsupportedAllowed   bool
		}
	}
	if code != cli.ExitOK || json.Unmarshal([]byte(out), &accepted) != nil || accepted.Standing.Support != "ended" ||
		accepted.Standing.SupportFrom != "release v1.0.0 (its own lock)" || !strings.HasPrefix(accepted.Standing.Source.Name, "release v1.1.0 at ") ||
		!accepted.Standing.UnsupportedAllowed {
		t.Errorf("verify -o json of v1.0.0 with --accept-unsupported: exit %d, want the ended series by its own table on record: %s %s", code, out, errs)
	}
}
