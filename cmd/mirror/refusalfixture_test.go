package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release"
)

// refusalFixture is the releases of the refusal table, each in a source
// registry of its own so that what one publishes beside it (the newest
// release, whose advisories and support table judge the others) is what
// its row says, and the targets the rows need.
type refusalFixture struct {
	trust []string
	rows  []refusalRow
}

func newRefusalFixture(t *testing.T) *refusalFixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(dir, "cosign.pub")
	if err := os.WriteFile(key, s.PublicKeyPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &refusalFixture{trust: []string{"--key", key, "--allow-unscanned", "--allow-no-provenance"}}
	seed := uint64(80)
	publish := func(host, prefix, version string, o releasetest.Options) *releasetest.Release {
		t.Helper()
		seed++
		o.Registry, o.Prefix, o.Version, o.Seed = host, prefix, version, seed
		if o.Signer.KeyPath == "" {
			o.Signer = s
		}
		rel, err := releasetest.Publish(ctx, o)
		if err != nil {
			t.Fatalf("publishing %s: %v", version, err)
		}
		return rel
	}
	export := func(rel *releasetest.Release, accept ...string) string {
		t.Helper()
		p := filepath.Join(dir, rel.Lock.Version+"-"+rel.Indexes["reloader"][7:19]+".tar")
		if code, _, errs := runCLI(t, append(append([]string{"export", "--lock-ref", rel.LockRef, "--to", p}, accept...), f.trust...)...); code != cli.ExitOK {
			t.Fatalf("export %s: exit %d: %s", rel.Lock.Version, code, errs)
		}
		return p
	}
	held := func(rels ...*releasetest.Release) (string, string) {
		t.Helper()
		target := startRegistry(t).Host + "/platform/reloader"
		for _, rel := range rels {
			if code, _, errs := runCLI(t, append([]string{"copy", "--lock-ref", rel.LockRef, "--target", target}, f.trust...)...); code != cli.ExitOK {
				t.Fatalf("copy %s: exit %d: %s", rel.Lock.Version, code, errs)
			}
		}
		return target, strings.Join(f.lockTags(t, target), ",")
	}

	// v1.0.0, then v1.1.0 carrying an advisory against it and a support
	// table that ends v1.0; the target holds v1.1.0.
	src := startDistribution(t).Host
	affected := publish(src, "", "v1.0.0", releasetest.Options{})
	advDir, table := writeAdvisories(t, false)
	fixed := publish(src, "", "v1.1.0", releasetest.Options{AdvisoriesDir: advDir, SupportFile: table})
	tFixed, tFixedTags := held(fixed)
	f.rows = append(f.rows, refusalRow{rule: "an advisory carried by a newer release", lockRef: affected.LockRef,
		archive: export(affected, "--accept-advisory", advisoryID, "--accept-unsupported"), target: tFixed, heldTags: tFixedTags, held: fixed,
		says:   []string{"advisory " + advisoryID + " marks v1.0.0 affected", "--accept-advisory " + advisoryID},
		accept: []string{"--accept-advisory", advisoryID, "--accept-unsupported"}, acceptAtTarget: []string{"--allow-downgrade"}, recorded: advisoryID})

	// A series its own table ends, and one no table lists.
	ended := publish(startDistribution(t).Host, "", "v2.0.0", releasetest.Options{
		SupportFile: writeTable(t, `{series: v2.0, released: "`+day(-400)+`", endOfSupport: "`+day(-1)+`"}`)})
	f.rows = append(f.rows, refusalRow{rule: "end of support", lockRef: ended.LockRef, archive: export(ended, "--accept-unsupported"),
		says:   []string{"series v2.0 of v2.0.0 is past its end of support", "--accept-unsupported"},
		accept: []string{"--accept-unsupported"}, recorded: `"unsupportedAllowed"`})
	// The pipeline will not cut a release its own table does not list, so
	// the unlisted one is a v1 lock (no table of its own), published beside
	// a newer release whose table lists only its own series.
	srcUnl := startDistribution(t).Host
	unlisted := publish(srcUnl, "", "v3.0.0", releasetest.Options{})
	lockJSON, bundle := rewriteLock(t, ctx, s, unlisted, func(l map[string]any) {
		l["schema"] = release.LockSchemaV1
		delete(l, "support")
		delete(l, "advisories")
	})
	if err := releasetest.PushLock(ctx, unlisted.LockRef, lockJSON, bundle); err != nil {
		t.Fatal(err)
	}
	listing := publish(srcUnl, "", "v3.1.0", releasetest.Options{})
	tListing, tListingTags := held(listing)
	f.rows = append(f.rows, refusalRow{rule: "unlisted series", lockRef: unlisted.LockRef, archive: export(unlisted, "--accept-unsupported"),
		target: tListing, heldTags: tListingTags, held: listing,
		says:   []string{"series v3.0 of v3.0.0 is unlisted", "--accept-unsupported"},
		accept: []string{"--accept-unsupported"}, acceptAtTarget: []string{"--allow-downgrade"}, recorded: `"unsupportedAllowed"`})

	// v4.0.0 where v5.0.0 is held; v5.0.0 when v5.0.1 is asked for; and
	// v5.0.0's lock, signed, naming "5.0.0".
	srcDown := startDistribution(t).Host
	older := publish(srcDown, "", "v4.0.0", releasetest.Options{})
	newer := publish(srcDown, "", "v5.0.0", releasetest.Options{})
	tNewer, tNewerTags := held(newer)
	f.rows = append(f.rows, refusalRow{rule: "downgrade at the target", lockRef: older.LockRef, archive: export(older),
		target: tNewer, heldTags: tNewerTags, held: newer, commands: []string{"copy", "import"},
		says:   []string{"v4.0.0", "older than a release the target holds", "v5.0.0"},
		accept: []string{"--allow-downgrade"}, recorded: `"downgrade"`})
	f.rows = append(f.rows, refusalRow{rule: "another version than expected", lockRef: newer.LockRef, archive: export(newer),
		extra: []string{"--expect-version", "v5.0.1"}, says: []string{"the release is v5.0.0, but v5.0.1 was expected"}})
	f.rows = append(f.rows, f.scanRows(t, ctx, s, newer, publish(startDistribution(t).Host, "", "v5.1.0", releasetest.Options{}))...)
	f.rows = append(f.rows, refusalRow{rule: "a version without v", lockFile: relabel(t, ctx, s, newer, "5.0.0"),
		// No archive can carry it: export refuses it like every command.
		commands: []string{"plan", "copy", "export", "verify", "values", "policy", "review"},
		says:     []string{`version "5.0.0" is not vMAJOR.MINOR.PATCH`}})

	// The target holds a release whose images an impostor signed (its lock
	// re-signed by the release signer), published there directly, and a
	// good one: --keep-previous must not admit the forgery.
	tForged := startRegistry(t).Host
	impostor, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	publish(tForged, "platform/reloader", "v0.9.0", releasetest.Options{SignaturesBy: &impostor})
	good := publish(startDistribution(t).Host, "", "v1.0.0", releasetest.Options{})
	target := tForged + "/platform/reloader"
	if code, _, errs := runCLI(t, append([]string{"copy", "--lock-ref", good.LockRef, "--target", target}, f.trust...)...); code != cli.ExitOK {
		t.Fatalf("copy v1.0.0 beside the forgery: exit %d: %s", code, errs)
	}
	f.rows = append(f.rows, refusalRow{rule: "an extra release with a forged image signature", lockRef: target + "/reloader-release:v1.0.0",
		target: target, commands: []string{"policy"}, extra: []string{"--keep-previous", "1"},
		says: []string{"--keep-previous: release v0.9.0", "verification failed"}})
	return f
}

// rewriteLock is rel's lock changed by edit and signed by s: what the
// signer would have published had it written that.
func rewriteLock(t *testing.T, ctx context.Context, s releasetest.Signer, rel *releasetest.Release, edit func(map[string]any)) (lockJSON, bundle []byte) {
	t.Helper()
	var l map[string]any
	if err := json.Unmarshal(rel.LockJSON, &l); err != nil {
		t.Fatal(err)
	}
	edit(l)
	lockJSON = mustJSON(t, l)
	bundle, err := s.SignLock(ctx, lockJSON)
	if err != nil {
		t.Fatal(err)
	}
	return lockJSON, bundle
}

// relabel is rel's lock naming another version, signed by s, as a file:
// what a signer who wrote "5.0.0" would have published.
func relabel(t *testing.T, ctx context.Context, s releasetest.Signer, rel *releasetest.Release, version string) string {
	t.Helper()
	lockJSON, bundle := rewriteLock(t, ctx, s, rel, func(l map[string]any) { l["version"] = version })
	p := filepath.Join(t.TempDir(), "reloader-release.json")
	if err := os.WriteFile(p, lockJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p+".sigstore.json", bundle, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
