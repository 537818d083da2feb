package rpmdb

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	rpmdb "github.com/anchore/go-rpmdb/pkg"
)

func TestTheDatabaseReadsBackWithTheRPMReaderSyftUses(t *testing.T) {
	pkgs := []Package{
		{Name: "bash", Version: "5.1.8", Release: "9.el9", Arch: "x86_64", License: "GPL-3.0-or-later", Vendor: "Red Hat, Inc.", SourceRPM: "bash-5.1.8-9.el9.src.rpm", Size: 7738634},
		{Name: "tzdata", Version: "2026a", Release: "1.el9", Arch: "noarch", License: "LicenseRef-Fedora-Public-Domain", Size: 1},
	}
	data, err := SQLite(context.Background(), pkgs, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	again, err := SQLite(context.Background(), pkgs, t.TempDir())
	if err != nil || !bytes.Equal(data, again) {
		t.Errorf("two databases of the same packages differ (%v): image layers would not be reproducible", err)
	}
	file := filepath.Join(t.TempDir(), "rpmdb.sqlite")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := rpmdb.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.ListPackages()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d packages read back, want 2", len(got))
	}
	b := got[0]
	if b.Name != "bash" || b.Version != "5.1.8" || b.Release != "9.el9" || b.Arch != "x86_64" || b.License != "GPL-3.0-or-later" ||
		b.Vendor != "Red Hat, Inc." || b.SourceRpm != "bash-5.1.8-9.el9.src.rpm" || b.Size != 7738634 {
		t.Errorf("bash read back as %+v", b)
	}
	if len(b.SigMD5) != 32 || b.SigMD5 == got[1].SigMD5 {
		t.Errorf("package digests %q and %q: want one MD5 per package (SIGMD5)", b.SigMD5, got[1].SigMD5)
	}
	if got[1].Name != "tzdata" || got[1].License != "LicenseRef-Fedora-Public-Domain" {
		t.Errorf("tzdata read back as %+v", got[1])
	}
}

func TestAHeaderNeedsNameVersionReleaseAndArch(t *testing.T) {
	if _, err := Header(Package{Name: "bash", Version: "5"}); err == nil {
		t.Error("a header without release and arch was written")
	}
}
