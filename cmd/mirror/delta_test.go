package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/mirror/archive"
	"github.com/reloader-dev/reloader/publish/releasetest"
)

// nextReleases publishes v1.2.3 and v1.2.4 with the release pipeline, signed
// by one key, as consecutive releases are: v1.2.4 is a new build (another
// commit and version stamped into the binary), so its binary layer, its
// image configs, SBOMs, attestations, signatures and charts are new and its
// base layers are v1.2.3's.
func nextReleases(t *testing.T) (dir, key string, refs [2]string) {
	t.Helper()
	src := startRegistry(t)
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	key = filepath.Join(dir, "cosign.pub")
	if err := os.WriteFile(key, s.PublicKeyPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, v := range []string{"v1.2.3", "v1.2.4"} {
		rel, err := releasetest.Publish(context.Background(), releasetest.Options{Registry: src.Host, Signer: s, Seed: uint64(i + 1), Version: v})
		if err != nil {
			t.Fatal(err)
		}
		refs[i] = rel.LockRef
		lock := filepath.Join(dir, v+".json")
		_ = os.WriteFile(lock, rel.LockJSON, 0o644)
		_ = os.WriteFile(lock+".sigstore.json", rel.LockBundle, 0o644)
	}
	return dir, key, refs
}

func catalog(t *testing.T, host string) []string {
	t.Helper()
	resp, err := http.Get("http://" + host + "/v2/_catalog")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var c struct{ Repositories []string }
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("catalog of %s: %v: %s", host, err, b)
	}
	return c.Repositories
}

func size(t *testing.T, p string) int64 {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// export --since writes only what the previous release lacks, whichever way
// the previous release is named (its archive, its signed lock file, its
// lock reference); import of the delta is refused with nothing pushed where
// the previous release is not, and completes, verified, where it is.
func TestDeltaArchiveOfTheNextRelease(t *testing.T) {
	t.Parallel()
	dir, key, refs := nextReleases(t)
	trustFlags := []string{"--key", key, "--allow-unscanned", "--allow-no-provenance"}
	export := func(ref, to string, extra ...string) map[string]any {
		t.Helper()
		code, out, errs := runCLI(t, append(append([]string{"export", "--lock-ref", ref, "--to", to, "-o", "json"}, trustFlags...), extra...)...)
		if code != cli.ExitOK {
			t.Fatalf("export %s %v: exit %d: %s", ref, extra, code, errs)
		}
		var res map[string]any
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("export json: %v: %s", err, out)
		}
		return res
	}
	v1, v2full, delta := filepath.Join(dir, "v1.2.3.tar"), filepath.Join(dir, "v1.2.4.tar"), filepath.Join(dir, "v1.2.4-since-v1.2.3.tar")
	export(refs[0], v1)
	export(refs[1], v2full)
	res := export(refs[1], delta, "--since", v1)
	full, part := size(t, v2full), size(t, delta)
	t.Logf("v1.2.4 full archive %d bytes, delta against v1.2.3 %d bytes (%.1f%%); left out %v manifests and %v blobs (%v bytes)",
		full, part, 100*float64(part)/float64(full), res["omittedManifests"], res["omittedBlobs"], res["omittedBytes"])
	if part >= full/2 || res["omittedBlobs"] == nil {
		t.Fatalf("delta is %d bytes of the full %d: it should leave out the base layers v1.2.3 already has", part, full)
	}
	since, _ := res["since"].(map[string]any)
	if since["version"] != "v1.2.3" || !strings.HasPrefix(since["lockDigest"].(string), "sha256:") {
		t.Fatalf("delta does not record its base release: %v", res["since"])
	}
	// The same delta whichever way the base is named.
	for _, base := range []string{filepath.Join(dir, "v1.2.3.json"), refs[0]} {
		other := export(refs[1], filepath.Join(dir, "other.tar"), "--since", base)
		if other["omittedBlobs"] != res["omittedBlobs"] || other["omittedManifests"] != res["omittedManifests"] {
			t.Errorf("--since %s left out %v/%v, --since the archive %v/%v", base, other["omittedManifests"], other["omittedBlobs"], res["omittedManifests"], res["omittedBlobs"])
		}
	}
	// The base must verify under the same trust flags: a base lock signed
	// by another key is refused, nothing written.
	stranger, _ := releasetest.NewKeySigner(t.TempDir())
	forged := filepath.Join(dir, "forged.json")
	lockJSON, _ := os.ReadFile(filepath.Join(dir, "v1.2.3.json"))
	bundle, err := stranger.SignLock(context.Background(), lockJSON)
	if err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(forged, lockJSON, 0o644)
	_ = os.WriteFile(forged+".sigstore.json", bundle, 0o644)
	if code, _, errs := runCLI(t, append([]string{"export", "--lock-ref", refs[1], "--to", filepath.Join(dir, "x.tar"), "--since", forged}, trustFlags...)...); code != cli.ExitRefused || !strings.Contains(errs, "delta against") {
		t.Errorf("--since a lock signed by another key: exit %d, want %d: %s", code, cli.ExitRefused, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.tar")); err == nil {
		t.Error("an archive was written against an unverified base")
	}
	// A delta against a newer release is refused.
	if code, _, errs := runCLI(t, append([]string{"export", "--lock-ref", refs[0], "--to", filepath.Join(dir, "back.tar"), "--since", refs[1]}, trustFlags...)...); code == cli.ExitOK || !strings.Contains(errs, "not older") {
		t.Errorf("delta from v1.2.4 back to v1.2.3: exit %d: %s", code, errs)
	}

	empty := startRegistry(t)
	code, _, errs := runCLI(t, append([]string{"import", "-f", delta, "--target", empty.Host + "/platform/reloader"}, trustFlags...)...)
	if code != cli.ExitRefused || !strings.Contains(errs, "import release v1.2.3") || !strings.Contains(errs, "blob "+empty.Host+"/platform/reloader/") {
		t.Fatalf("delta onto an empty target: exit %d, want %d naming the missing blobs and the release to import first: %s", code, cli.ExitRefused, errs)
	}
	if repos := catalog(t, empty.Host); len(repos) != 0 {
		t.Fatalf("the refused delta import pushed to %v", repos)
	}

	refusedWithoutABlob(t, dir, key, refs, v1, delta, trustFlags)

	target := startRegistry(t)
	dst := target.Host + "/platform/reloader"
	if code, _, errs := runCLI(t, append([]string{"import", "-f", v1, "--target", dst}, trustFlags...)...); code != cli.ExitOK {
		t.Fatalf("import v1.2.3: exit %d: %s", code, errs)
	}
	code, out, errs := runCLI(t, append([]string{"import", "-f", delta, "--target", dst, "-o", "json"}, trustFlags...)...)
	if code != cli.ExitOK {
		t.Fatalf("import the delta onto v1.2.3: exit %d: %s", code, errs)
	}
	var rc struct {
		Version string
		Stats   struct{ BlobsPushed, BlobsPresent int }
	}
	if err := json.Unmarshal([]byte(out), &rc); err != nil || rc.Version != "v1.2.4" || rc.Stats.BlobsPresent == 0 {
		t.Fatalf("delta import receipt: %v: %s", err, out)
	}
	if code, _, errs := runCLI(t, append([]string{"verify", "--lock-ref", dst + "/reloader-release:v1.2.4", "--target", dst}, trustFlags...)...); code != cli.ExitOK {
		t.Fatalf("v1.2.4 at the target after the delta import does not verify: exit %d: %s", code, errs)
	}
	if code, out, errs := runCLI(t, append([]string{"values", "-f", delta, "--target", dst}, trustFlags...)...); code != cli.ExitOK || !strings.Contains(out, dst+"/reloader") {
		t.Fatalf("values from the delta: exit %d: %s %s", code, out, errs)
	}
	if code, _, errs := runCLI(t, append([]string{"verify", "-f", delta}, trustFlags...)...); code != cli.ExitUsage || !strings.Contains(errs, "delta against release v1.2.3") {
		t.Errorf("verify of a delta without --target: exit %d, want %d: %s", code, cli.ExitUsage, errs)
	}
}

// A target holding v1.2.3 but for one blob the delta leaves out: the delta
// is refused naming that blob, and refused again, from the verified
// release's own blobs, when delta.json is edited to leave out nothing (it
// is not signed); the release is not at the target after either.
func refusedWithoutABlob(t *testing.T, dir, key string, refs [2]string, v1, delta string, trustFlags []string) {
	t.Helper()
	reg := startRegistry(t)
	dst := reg.Host + "/platform/reloader"
	if code, _, errs := runCLI(t, append([]string{"import", "-f", v1, "--target", dst}, trustFlags...)...); code != cli.ExitOK {
		t.Fatalf("import v1.2.3: exit %d: %s", code, errs)
	}
	layoutDir := filepath.Join(dir, "delta-layout")
	if code, _, errs := runCLI(t, append([]string{"export", "--lock-ref", refs[1], "--to", layoutDir, "--since", v1}, trustFlags...)...); code != cli.ExitOK {
		t.Fatalf("export the delta as a directory: exit %d: %s", code, errs)
	}
	raw, err := os.ReadFile(filepath.Join(layoutDir, archive.DeltaFile))
	if err != nil {
		t.Fatal(err)
	}
	d, err := archive.ParseDelta(raw)
	if err != nil || len(d.Blobs) == 0 {
		t.Fatalf("delta.json: %v, %d blobs left out", err, len(d.Blobs))
	}
	gone := d.Blobs[0]
	_, path, _ := strings.Cut(gone.Repository, "/reloader-dev/")
	req, _ := http.NewRequest(http.MethodDelete, "http://"+reg.Host+"/v2/platform/reloader/"+path+"/blobs/"+gone.Digest, nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("deleting %s at the target: %v %v", gone.Digest, err, resp)
	}
	notThere := func(what string) {
		t.Helper()
		resp, err := http.Get("http://" + reg.Host + "/v2/platform/reloader/reloader-release/manifests/v1.2.4")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: the target has release v1.2.4 (%s)", what, resp.Status)
		}
	}
	code, _, errs := runCLI(t, append([]string{"import", "-f", delta, "--target", dst}, trustFlags...)...)
	if code != cli.ExitRefused || !strings.Contains(errs, gone.Digest) {
		t.Errorf("delta onto a target lacking %s: exit %d, want %d naming it: %s", gone.Digest, code, cli.ExitRefused, errs)
	}
	notThere("delta refused for a missing blob")

	d.Blobs, d.Manifests = []archive.Omitted{}, []archive.Omitted{}
	edited, _ := d.Marshal()
	if err := os.WriteFile(filepath.Join(layoutDir, archive.DeltaFile), edited, 0o644); err != nil {
		t.Fatal(err)
	}
	resum(t, layoutDir)
	code, _, errs = runCLI(t, append([]string{"import", "-f", layoutDir, "--target", dst}, trustFlags...)...)
	if code != cli.ExitRefused || !strings.Contains(errs, gone.Digest) || !strings.Contains(errs, "neither this delta archive") {
		t.Errorf("delta with an edited delta.json onto a target lacking %s: exit %d, want %d naming it: %s", gone.Digest, code, cli.ExitRefused, errs)
	}
	notThere("delta with an edited delta.json")
}

// resum rewrites a layout directory's checksum manifest for its files.
func resum(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, archive.ChecksumFile))
	if err != nil {
		t.Fatal(err)
	}
	c, decl, _, err := archive.ParseManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for name := range c {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		c[name] = hex.EncodeToString(sum[:])
		total += int64(len(data))
	}
	if err := os.WriteFile(filepath.Join(dir, archive.ChecksumFile), c.MarshalDelta(total, decl.Since), 0o644); err != nil {
		t.Fatal(err)
	}
}
