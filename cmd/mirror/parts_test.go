package main

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
)

// export --split-size writes parts and a part list; import takes the parts
// in any order from several directories, and refuses, naming it and with
// nothing pushed, a damaged or a missing part.
func TestSplitArchiveAcrossDirectories(t *testing.T) {
	t.Parallel()
	rel, _, key, _ := keySignedRelease(t, context.Background(), startRegistry(t), 5)
	dir := t.TempDir()
	trustFlags := []string{"--key", key, "--allow-unscanned", "--allow-no-provenance"}
	out := filepath.Join(dir, "out")
	_ = os.Mkdir(out, 0o755)
	for _, bad := range []string{"0", "-1MiB", "1.5MiB", "650 MiB x", "12XB"} {
		if code, _, errs := runCLI(t, append([]string{"export", "--lock-ref", rel.LockRef, "--to", filepath.Join(out, "r.tar.zst"), "--split-size", bad}, trustFlags...)...); code != cli.ExitUsage {
			t.Errorf("--split-size %q: exit %d, want %d: %s", bad, code, cli.ExitUsage, errs)
		}
	}
	code, _, errs := runCLI(t, append([]string{"export", "--lock-ref", rel.LockRef, "--to", filepath.Join(out, "reloader-v1.2.3.tar"), "--split-size", "100KiB"}, trustFlags...)...)
	if code != cli.ExitOK {
		t.Fatalf("split export: exit %d: %s", code, errs)
	}
	parts, _ := filepath.Glob(filepath.Join(out, "reloader-v1.2.3.tar.part[0-9]*"))
	if len(parts) < 4 {
		t.Fatalf("%d parts of 100KiB, want several: %v", len(parts), parts)
	}
	for _, p := range parts {
		if st, _ := os.Stat(p); st.Size() > 100<<10 {
			t.Errorf("part %s is %d bytes, more than --split-size", p, st.Size())
		}
	}
	if _, err := os.Stat(filepath.Join(out, "reloader-v1.2.3.tar")); err == nil {
		t.Error("a split export also left the single archive")
	}
	// Shuffled over two directories, as from two discs.
	discs := [2]string{filepath.Join(dir, "disc1"), filepath.Join(dir, "disc2")}
	for _, d := range discs {
		_ = os.Mkdir(d, 0o755)
	}
	r := rand.New(rand.NewPCG(27, 1))
	r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	for i, p := range parts {
		if err := os.Rename(p, filepath.Join(discs[i%2], filepath.Base(p))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(filepath.Join(out, "reloader-v1.2.3.tar.parts"), filepath.Join(discs[1], "reloader-v1.2.3.tar.parts")); err != nil {
		t.Fatal(err)
	}

	dst := startRegistry(t)
	victim := filepath.Join(discs[0], filepath.Base(parts[0]))
	good, _ := os.ReadFile(victim)
	bad := append([]byte(nil), good...)
	bad[len(bad)/2] ^= 0xff
	_ = os.WriteFile(victim, bad, 0o644)
	code, _, errs = runCLI(t, append([]string{"import", "-f", discs[1], "-f", discs[0], "--target", dst.Host + "/corrupt"}, trustFlags...)...)
	if code != cli.ExitRefused || !strings.Contains(errs, "part "+filepath.Base(victim)+" is damaged") {
		t.Errorf("a damaged part: exit %d, want %d naming %s: %s", code, cli.ExitRefused, filepath.Base(victim), errs)
	}
	_ = os.WriteFile(victim, good, 0o644)

	_ = os.Rename(victim, victim+".away")
	code, _, errs = runCLI(t, append([]string{"import", "-f", discs[0], "-f", discs[1], "--target", dst.Host + "/missing"}, trustFlags...)...)
	if code != cli.ExitRefused || !strings.Contains(errs, "missing") || !strings.Contains(errs, filepath.Base(victim)) {
		t.Errorf("a missing part: exit %d, want %d naming %s: %s", code, cli.ExitRefused, filepath.Base(victim), errs)
	}
	_ = os.Rename(victim+".away", victim)
	if repos := catalog(t, dst.Host); len(repos) != 0 {
		t.Fatalf("refused imports pushed %v", repos)
	}

	code, out2, errs := runCLI(t, append([]string{"import", "-f", discs[0], "-f", filepath.Join(discs[1], "reloader-v1.2.3.tar.parts"), "-f", discs[1], "--target", dst.Host + "/platform/reloader"}, trustFlags...)...)
	if code != cli.ExitOK {
		t.Fatalf("import of shuffled parts: exit %d: %s %s", code, out2, errs)
	}
}
