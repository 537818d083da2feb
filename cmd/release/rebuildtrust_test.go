package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/pipeline"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/test/registry"

	"github.com/reloader-dev/reloader/test/tools"
)

// rebuild trusts a release only as far as verify does: the lock's signature
// and every signature the lock lists, provenance included, against the
// signer the user names. An unsigned lock, a lock signed by someone else and
// a release whose provenance another key signed are each refused (exit 3)
// before anything is built; no trust flags at all is a usage error; the
// genuine release, made by the real pipeline, verifies and rebuilds.
func TestRebuildRefusesAnUnsignedLockAndForgedProvenanceBeforeBuilding(t *testing.T) {
	if testing.Short() {
		t.Skip("publishes two releases with the real pipeline")
	}
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	reg := registry.InProcess(t)
	signer, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	impostor, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	genuine, err := releasetest.Publish(ctx, releasetest.Options{Registry: reg.Host, Signer: signer, Version: "v1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	forged, err := releasetest.Publish(ctx, releasetest.Options{Registry: reg.Host, Prefix: "forged", Signer: signer, SignaturesBy: &impostor, Version: "v1.2.4", Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pub := filepath.Join(dir, "cosign.pub")
	otherPub := filepath.Join(dir, "other.pub")
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("cosign.pub", signer.PublicKeyPEM())
	write("other.pub", impostor.PublicKeyPEM())
	lock := func(name string, lockJSON, bundle []byte) string {
		p := write(name, lockJSON)
		write(name+".sigstore.json", bundle)
		return p
	}
	genuineLock := lock("genuine.json", genuine.LockJSON, genuine.LockBundle)
	edited := lock("edited.json", []byte(strings.Replace(string(genuine.LockJSON), `"v1.2.3"`, `"v1.2.9"`, 1)), genuine.LockBundle)
	forgedLock := lock("forged.json", forged.LockJSON, forged.LockBundle)

	cases := []struct {
		name string
		args []string
		code int
		say  string
	}{
		{"no trust flags", []string{"--lock", genuineLock}, cli.ExitUsage, "say whom to trust"},
		{"a lock signed by another key", []string{"--lock", genuineLock, "--key", otherPub}, cli.ExitRefused, "signature does not verify"},
		{"an edited (unsigned) lock", []string{"--lock", edited, "--key", pub}, cli.ExitRefused, "signature does not verify"},
		{"provenance and signatures by another key", []string{"--lock", forgedLock, "--key", pub}, cli.ExitRefused, "failed verification"},
	}
	t.Run("the genuine release verifies and rebuilds", func(t *testing.T) { genuineRebuild(t, genuineLock, pub) })
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			start := time.Now()
			code, stdout, stderr := execute(append([]string{"rebuild", "--source", t.TempDir(), "--out", out}, c.args...)...)
			if code != c.code || !strings.Contains(stderr, c.say) {
				t.Fatalf("exit %d, want %d saying %q\n%s\n%s", code, c.code, c.say, stdout, stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("something was built into %s before the refusal (%v)", out, err)
			}
			t.Logf("refused in %s: %s", time.Since(start).Round(time.Millisecond), firstLineOf(stderr))
		})
	}
}

// genuineRebuild is the other side: the same release, verified against
// its signer, rebuilds (from a plain copy of the source, as an unpacked
// source archive would be) to the digests of its lock.
func genuineRebuild(t *testing.T, lock, pub string) {
	t.Helper()
	start := time.Now()
	code, stdout, stderr := execute("rebuild", "--lock", lock, "--key", pub, "--source", copySource(t, "../.."), "--out", t.TempDir(), "-o", "json")
	t.Logf("verified and rebuilt in %s", time.Since(start).Round(time.Millisecond))
	var rep pipeline.RebuildReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != cli.ExitOK || !rep.Identical() {
		t.Fatalf("exit %d, report %+v (%v)\n%s", code, rep.Images, err, stderr)
	}
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
