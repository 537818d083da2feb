package chart

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func writeChart(t *testing.T, mtime time.Time) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	for p, c := range map[string]string{
		"Chart.yaml":            "apiVersion: v2\nname: demo\nversion: 1.0.0\n",
		"values.yaml":           "a: 1\n",
		"templates/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
	} {
		f := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestPackagingIsByteIdenticalWhateverTheFileTimes(t *testing.T) {
	created := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	a, err := Package(Options{Dir: writeChart(t, time.Unix(1, 0)), Created: created})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // helm stamps archives with the clock
	b, err := Package(Options{Dir: writeChart(t, time.Now()), Created: created})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Archive, b.Archive) {
		t.Fatal("two packagings of the same chart differ")
	}
	ma, _ := a.Artifact("src").Manifest()
	mb, _ := b.Artifact("src").Manifest()
	if !bytes.Equal(ma, mb) {
		t.Fatal("chart manifests differ")
	}
	if a.Name != "demo" || a.Version != "1.0.0" {
		t.Fatalf("chart %s %s", a.Name, a.Version)
	}
}

func TestAnInvalidChartIsRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte("apiVersion: v2\nname: demo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Package(Options{Dir: dir, Created: time.Now()}); err == nil {
		t.Fatal("a chart without a version was packaged")
	}
}
