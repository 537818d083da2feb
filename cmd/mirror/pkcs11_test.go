package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/build"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
	"github.com/reloader-dev/reloader/test/tools"
)

// softHSM is a SoftHSM2 token of the test's own (its token directory in a
// temporary directory), holding an EC P-256 key pair generated inside it.
type softHSM struct {
	module, conf, pin string
	uri               string
}

// newSoftHSM needs Debian's softhsm2 and opensc (pkcs11-tool). Without them
// the test fails, naming the packages, unless -short (make unit).
func newSoftHSM(t *testing.T, ctx context.Context) softHSM {
	t.Helper()
	var h softHSM
	for _, m := range []string{"/usr/lib/softhsm/libsofthsm2.so", "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so", "/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so", "/usr/lib64/pkcs11/libsofthsm2.so"} {
		if _, err := os.Stat(m); err == nil {
			h.module = m
			break
		}
	}
	_, errUtil := exec.LookPath("softhsm2-util")
	_, errTool := exec.LookPath("pkcs11-tool")
	if h.module == "" || errUtil != nil || errTool != nil {
		// make test runs every test, in CI or not; make unit (-short)
		// is what runs without a token.
		if testing.Short() {
			t.Skip("no SoftHSM2 or pkcs11-tool (-short)")
		}
		t.Fatal("no SoftHSM2 (softhsm2-util, libsofthsm2.so) or no pkcs11-tool: apt-get install -y softhsm2 opensc (make unit runs the tests that need no token)")
	}
	dir := t.TempDir()
	h.conf, h.pin = filepath.Join(dir, "softhsm2.conf"), "246810"
	if err := os.Mkdir(filepath.Join(dir, "tokens"), 0o700); err != nil {
		t.Fatal(err)
	}
	conf := "directories.tokendir = " + filepath.Join(dir, "tokens") + "\nobjectstore.backend = file\nlog.level = ERROR\n"
	if err := os.WriteFile(h.conf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	h.run(t, ctx, "softhsm2-util", "--init-token", "--free", "--label", "reloader-release", "--pin", h.pin, "--so-pin", "13579246")
	h.run(t, ctx, "pkcs11-tool", "--module", h.module, "--token-label", "reloader-release", "--login", "--pin", h.pin,
		"--keypairgen", "--key-type", "EC:prime256v1", "--label", "release-signing", "--id", "01", "--sensitive")
	h.uri = "pkcs11:token=reloader-release;object=release-signing?module-path=" + h.module
	return h
}

// env is what a process using the token needs; the PIN goes in
// COSIGN_PKCS11_PIN, never on a command line.
func (h softHSM) env() []string {
	return append(os.Environ(), "SOFTHSM2_CONF="+h.conf, "COSIGN_PKCS11_PIN="+h.pin)
}

func (h softHSM) run(t *testing.T, ctx context.Context, bin string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = h.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// A release signed with a key that never leaves a PKCS#11 token: a
// reloader-release built with -tags pkcs11key (cgo) runs the whole local
// release with --key pkcs11:... against SoftHSM2, and its public key, as
// `reloader-release public-key` exports it, is all verifiers need: the
// cosign CLI (v2 and v3) runs every command of the versions page with it,
// at the source and on a reloader-mirror copy; reloader-mirror verify
// reports the token's key as the one that verified, and export/import
// through an archive accepts the release with that key and refuses it with
// another.
func TestAReleaseSignedInAPKCS11TokenVerifiesWithItsExportedPublicKey(t *testing.T) {
	t.Parallel()
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	hsm := newSoftHSM(t, ctx)
	dir := t.TempDir()
	bin := filepath.Join(dir, "reloader-release")
	// Later variables win: CGO_ENABLED=1 over the static default. With the
	// static builds' tags only the packages with cgo files compile anew.
	if err := tools.GoBuildEnv(ctx, []string{"CGO_ENABLED=1"}, "./cmd/release", bin, "-tags", build.Tags+",pkcs11key"); err != nil {
		t.Fatal(err)
	}
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	src := startRegistry(t)
	out := filepath.Join(dir, "release")
	local := exec.CommandContext(ctx, bin, "local", "--out", out, "--registry", src.Host, "--key", hsm.uri, "--no-scan", "--no-charts",
		"--platforms", "linux/amd64", "--version", "v1.2.3", "--commit", strings.Repeat("cd", 20),
		"--support", releasetest.SupportTableFile(t, "v1.2.3"))
	local.Dir, local.Env = root, append(hsm.env(), "SOURCE_DATE_EPOCH=1796040000")
	if msg, err := local.CombinedOutput(); err != nil {
		t.Fatalf("reloader-release local --key pkcs11:...: %v\n%s", err, msg)
	}

	exported := filepath.Join(dir, "exported.pub")
	hsm.run(t, ctx, bin, "public-key", "--key", hsm.uri, "--outfile", exported)
	pubPEM, err := os.ReadFile(exported)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := trust.ParsePublicKey(pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(out, release.LockFileName)
	lockJSON, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := release.Parse(lockJSON)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("the key never left the token: the private key is sensitive and never extractable, and no private key was written", func(t *testing.T) {
		objs := hsm.run(t, ctx, "pkcs11-tool", "--module", hsm.module, "--token-label", "reloader-release", "--login", "--pin", hsm.pin, "--list-objects", "--type", "privkey")
		if !strings.Contains(objs, "release-signing") || !strings.Contains(objs, "never extractable") || !strings.Contains(objs, "always sensitive") {
			t.Errorf("the token's private key:\n%s", objs)
		}
		keys, _ := os.ReadDir(filepath.Join(out, "keys"))
		if len(keys) != 1 || keys[0].Name() != "cosign.pub" {
			t.Errorf("%s/keys holds %v, want only cosign.pub", out, keys)
		}
		written, _ := os.ReadFile(filepath.Join(out, "keys", "cosign.pub"))
		if string(written) != string(pubPEM) || lock.Signer.PublicKey != string(pubPEM) {
			t.Errorf("the lock's signer and keys/cosign.pub must be the token's public key %s", pubPEM)
		}
	})

	t.Run("the cosign CLI runs the versions page's commands with the exported key, at the source and on a mirrored copy", func(t *testing.T) {
		page, err := os.ReadFile(filepath.Join(out, "page", "versions.md"))
		if err != nil {
			t.Fatal(err)
		}
		clientsVerify(t, ctx, lock, page, map[string]string{"cosign.pub": exported}, nil, "--lock", lockPath, "--key", exported)
	})

	t.Run("reloader-mirror verify names the token's key as the one that verified", func(t *testing.T) {
		code, out, errs := runCLI(t, "verify", "--lock", lockPath, "--key", exported, "--allow-unscanned", "-o", "json")
		var res trust.Result
		if code != cli.ExitOK || json.Unmarshal([]byte(out), &res) != nil {
			t.Fatalf("verify: exit %d: %s", code, errs)
		}
		if res.Lock.Signer.KeySHA256 != trust.KeyFingerprint(pub) {
			t.Errorf("verified by %+v, want the token's key sha256:%s", res.Lock.Signer, trust.KeyFingerprint(pub))
		}
	})

	t.Run("reloader-mirror import accepts the archive with the exported key and refuses it with another", func(t *testing.T) {
		archive := filepath.Join(dir, "release.tar")
		if code, _, errs := runCLI(t, "export", "--lock", lockPath, "--key", exported, "--allow-unscanned", "--to", archive); code != cli.ExitOK {
			t.Fatalf("export: exit %d: %s", code, errs)
		}
		air := startRegistry(t)
		if code, _, errs := runCLI(t, "import", "-f", archive, "--key", exported, "--allow-unscanned", "--target", air.Host+"/airgap"); code != cli.ExitOK {
			t.Fatalf("import: exit %d: %s", code, errs)
		}
		other, err := releasetest.NewKeySigner(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		otherKey := filepath.Join(dir, "other.pub")
		if err := os.WriteFile(otherKey, other.PublicKeyPEM(), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, errs := runCLI(t, "import", "-f", archive, "--key", otherKey, "--allow-unscanned", "--target", air.Host+"/evil"); code != cli.ExitRefused {
			t.Errorf("import with another key: exit %d, want %d: %s", code, cli.ExitRefused, errs)
		}
	})
}
