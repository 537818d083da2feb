package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/pipeline"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release/csaf"
)

// A release publishes its advisories as signed CSAF 2.0 documents next to
// its versions page; import judges by them as by OSV files (v1.1.0's CSAF
// advisory refuses v1.0.0), and refuses a directory whose CSAF document was
// altered (here, to move the fix so that v1.0.0 looks unaffected) or lost
// its signature.
func TestImportJudgesBySignedCSAFAdvisoriesAndRefusesATamperedOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := startRegistry(t)
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	key := filepath.Join(dir, "cosign.pub")
	if err := os.WriteFile(key, s.PublicKeyPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	v1, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Seed: 31, Version: "v1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	advDir, _ := writeAdvisories(t, false)
	out := t.TempDir()
	if _, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Seed: 32, Version: "v1.1.0",
		AdvisoriesDir: advDir, OutDir: out}); err != nil {
		t.Fatal(err)
	}
	csafDir := filepath.Join(out, "page", pipeline.CSAFDir)
	name := csaf.FileName(advisoryID)
	doc, err := os.ReadFile(filepath.Join(csafDir, name))
	if err != nil {
		t.Fatalf("the release published no CSAF advisory: %v", err)
	}
	if err := csaf.Validate(doc); err != nil {
		t.Fatal(err)
	}
	if html, err := os.ReadFile(filepath.Join(out, "page", "index.html")); err != nil || !strings.Contains(string(html), `href="csaf/`+name+`"`) {
		t.Errorf("the versions page does not list %s: %v", name, err)
	}
	trust := []string{"--key", key, "--allow-unscanned", "--allow-no-provenance"}
	a1 := filepath.Join(dir, "v1.tar")
	if code, _, errs := runCLI(t, append([]string{"export", "--lock-ref", v1.LockRef, "--to", a1,
		// The connected side knows v1.1.0 marks it affected; the test is of
		// the disconnected side, judging by the CSAF documents it is given.
		"--accept-advisory", advisoryID}, trust...)...); code != cli.ExitOK {
		t.Fatalf("export of v1.0.0: exit %d: %s", code, errs)
	}
	target := startRegistry(t).Host + "/platform/reloader"
	importWith := func(advisories string) (int, string) {
		code, _, errs := runCLI(t, append([]string{"import", "-f", a1, "--target", target, "--advisories", advisories}, trust...)...)
		return code, errs
	}
	if code, errs := importWith(csafDir); code != cli.ExitRefused || !strings.Contains(errs, "advisory "+advisoryID+" marks v1.0.0 affected") {
		t.Fatalf("import of v1.0.0 judged by v1.1.0's CSAF advisories: exit %d, want %d naming %s: %s", code, cli.ExitRefused, advisoryID, errs)
	}
	tampered := copyDir(t, csafDir)
	moved := bytes.ReplaceAll(doc, []byte("<1.1.0"), []byte("<1.0.0"))
	if bytes.Equal(moved, doc) {
		t.Fatal("the CSAF advisory does not hold the range the test alters")
	}
	if err := os.WriteFile(filepath.Join(tampered, name), moved, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, errs := importWith(tampered); code != cli.ExitRefused || !strings.Contains(errs, "CSAF document "+name) || !strings.Contains(errs, "untrusted") {
		t.Errorf("import judged by a tampered CSAF advisory: exit %d, want %d refusing its signature: %s", code, cli.ExitRefused, errs)
	}
	unsigned := copyDir(t, csafDir)
	if err := os.Remove(filepath.Join(unsigned, name+csaf.BundleSuffix)); err != nil {
		t.Fatal(err)
	}
	if code, errs := importWith(unsigned); code != cli.ExitRefused || !strings.Contains(errs, "no signature bundle") {
		t.Errorf("import judged by an unsigned CSAF advisory: exit %d, want %d: %s", code, cli.ExitRefused, errs)
	}
}

func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}
