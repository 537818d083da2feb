package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/publish/signkey"
	"github.com/reloader-dev/reloader/release/trust"
	testregistry "github.com/reloader-dev/reloader/test/registry"
	"github.com/reloader-dev/reloader/test/tools"
)

// The default reloader-release is static and cannot load a PKCS#11 module:
// a pkcs11: key is refused before anything is built, as a usage error that
// says how to build the binary that takes it, and the PIN in the URI is
// never echoed.
func TestAPKCS11KeyInTheStaticBuildIsAUsageErrorSayingHowToBuildOne(t *testing.T) {
	if signkey.PKCS11Linked {
		t.Skip("this test binary was built with -tags pkcs11key")
	}
	uri := "pkcs11:token=release;object=reloader?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-value=s3cr3t"
	for _, args := range [][]string{
		{"public-key", "--key", uri},
		{"local", "--out", t.TempDir(), "--no-scan", "--key", uri},
	} {
		code, out := run(t, args...)
		if code != cli.ExitUsage || !strings.Contains(out, "-tags pkcs11key") || !strings.Contains(out, "CGO_ENABLED=1") {
			t.Errorf("%s: exit %d, want %d saying how to build with PKCS#11:\n%s", args[0], code, cli.ExitUsage, out)
		}
		if strings.Contains(out, "s3cr3t") || !strings.Contains(out, "set COSIGN_PKCS11_PIN instead") {
			t.Errorf("%s printed the PIN, or did not warn that it is in argv:\n%s", args[0], out)
		}
	}
	if code, out := run(t, "public-key", "--key", "awskms:///alias/reloader"); code != cli.ExitUsage || !strings.Contains(out, "not linked") {
		t.Errorf("a KMS key whose provider is not linked: exit %d:\n%s", code, out)
	}
}

// The PIN in a PKCS#11 URI is never printed, however it is spelt: cosign
// percent-decodes attribute names and takes ';' or '&' between them, so each
// of these is the same PIN to it. Each draws the argv warning; pin-source
// (a file) is hidden too but is no PIN on the command line.
func TestAPKCS11PINIsNeverPrintedInAnySpelling(t *testing.T) {
	base := "pkcs11:token=release;object=reloader?module-path=/usr/lib/softhsm/libsofthsm2.so"
	for _, attr := range []string{"&pin-value=s3cr3t", "&pin%2Dvalue=s3cr3t", "&pin%2dvalue=s3cr3t", ";pin-value=s3cr3t",
		"&PIN-VALUE=s3cr3t", "&pin-source=/run/s3cr3t", "&pin%2Dsource=/run/s3cr3t"} {
		uri := base + attr
		for _, args := range [][]string{{"public-key", "--key", uri}, {"local", "--out", t.TempDir(), "--no-scan", "--key", uri}} {
			_, out := run(t, args...)
			if strings.Contains(out, "s3cr3t") {
				t.Errorf("%s --key ...%s printed the PIN:\n%s", args[0], attr, out)
			}
			warned := strings.Contains(out, "set COSIGN_PKCS11_PIN instead")
			if pin := !strings.Contains(strings.ToLower(attr), "source"); warned != pin {
				t.Errorf("%s --key ...%s: warned about a PIN in argv %v, want %v:\n%s", args[0], attr, warned, pin, out)
			}
		}
	}
}

// The Vault / OpenBao transit provider is linked (a real server is not
// started here: see SECURITY.md, key custody): a malformed key reference is
// a usage error, and a server that cannot be reached fails to run, naming
// the key, with the token read from the environment and never printed.
func TestAHashiVaultKeyIsOpenedThroughSigstoresProvider(t *testing.T) {
	t.Setenv("VAULT_ADDR", "http://127.0.0.1:9")
	t.Setenv("VAULT_TOKEN", "s.t0ken")
	if code, out := run(t, "public-key", "--key", "hashivault://not a key"); code != cli.ExitUsage || !strings.Contains(out, "hashivault://<key>") {
		t.Errorf("a malformed hashivault reference: exit %d, want %d:\n%s", code, cli.ExitUsage, out)
	}
	code, out := run(t, "public-key", "--key", "hashivault://reloader-release")
	if code != cli.ExitError || !strings.Contains(out, "hashivault://reloader-release") || !strings.Contains(out, "127.0.0.1:9") {
		t.Errorf("an unreachable Vault: exit %d, want %d naming the key and the server:\n%s", code, cli.ExitError, out)
	}
	if strings.Contains(out, "s.t0ken") {
		t.Errorf("the Vault token was printed:\n%s", out)
	}
}

// public-key prints what the lock names as the signer of a release signed
// with that key, and its fingerprint.
func TestPublicKeyExportsTheKeyVerifiersAreGiven(t *testing.T) {
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := execute("public-key", "--key", s.KeyPath, "-o", "json")
	var got struct{ SHA256, PublicKey, Kind string }
	if code != cli.ExitOK || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("public-key: exit %d: %s%s", code, out, errs)
	}
	pub, err := s.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	if got.PublicKey != string(s.PublicKeyPEM()) || got.SHA256 != trust.KeyFingerprint(pub) || got.Kind != "file" {
		t.Fatalf("public-key printed %+v, want the signer's key %s", got, s.PublicKeyPEM())
	}
}

// rotationReleases are two releases in one registry, one signed by the key
// being rotated out and one by its successor, with both public keys.
type rotationReleases struct {
	oldLock, newLock, oldPub, newPub string
	oldFP, newFP                     string
}

func makeRotationReleases(t *testing.T) rotationReleases {
	t.Helper()
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	reg := testregistry.InProcess(t)
	dir := t.TempDir()
	var r rotationReleases
	for i, v := range []struct {
		version   string
		lock, pub *string
		fp        *string
	}{{"v1.0.0", &r.oldLock, &r.oldPub, &r.oldFP}, {"v1.1.0", &r.newLock, &r.newPub, &r.newFP}} {
		s, err := releasetest.NewKeySigner(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: reg.Host, Signer: s, Version: v.version, Seed: uint64(40 + i),
			// Apart: a signature tag holds every signature of its digest,
			// and each of them must verify.
			Prefix: "rotation-" + strings.ReplaceAll(v.version, ".", "-")})
		if err != nil {
			t.Fatal(err)
		}
		*v.pub, *v.lock = filepath.Join(dir, v.version+".pub"), filepath.Join(dir, v.version+".json")
		for p, b := range map[string][]byte{*v.pub: s.PublicKeyPEM(), *v.lock: rel.LockJSON, *v.lock + ".sigstore.json": rel.LockBundle} {
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		pub, err := s.PublicKey()
		if err != nil {
			t.Fatal(err)
		}
		*v.fp = trust.KeyFingerprint(pub)
	}
	return r
}

// During a key rotation reloader-release verify takes both keys, the old
// one with a window (--key old.pub,not-after=DATE, judged by the clock of
// the machine that verifies): the old key's release verifies inside the
// window and is refused after it naming the key and the date, the new
// key's release verifies, and the report says which key verified.
func TestVerifyAcceptsARotatedOutKeyOnlyWithinItsWindow(t *testing.T) {
	r := makeRotationReleases(t)
	future := time.Now().UTC().AddDate(0, 1, 0).Format(time.DateOnly)
	past := time.Now().UTC().AddDate(0, 0, -2).Format(time.DateOnly)
	inWindow := []string{"--key", r.newPub, "--key", r.oldPub + ",not-after=" + future}
	afterWindow := []string{"--key", r.newPub, "--key", r.oldPub + ",not-after=" + past}
	verify := func(lock string, keys []string) (int, string) {
		return run(t, append([]string{"verify", "--lock", lock}, keys...)...)
	}

	if code, out := verify(r.oldLock, inWindow); code != cli.ExitOK || !strings.Contains(out, "signed by key sha256:"+r.oldFP) {
		t.Errorf("the old key's release inside its window: exit %d, want 0 naming the old key:\n%s", code, out)
	}
	code, out := verify(r.oldLock, afterWindow)
	if code != cli.ExitRefused || !strings.Contains(out, r.oldFP) || !strings.Contains(out, past+"T23:59:59Z") || !strings.Contains(out, "rotated out") {
		t.Errorf("the old key's release after its window: exit %d, want %d naming the key and the date:\n%s", code, cli.ExitRefused, out)
	}
	for _, keys := range [][]string{inWindow, afterWindow} {
		if code, out := verify(r.newLock, keys); code != cli.ExitOK || !strings.Contains(out, "signed by key sha256:"+r.newFP) {
			t.Errorf("the new key's release with %v: exit %d, want 0 naming the new key:\n%s", keys, code, out)
		}
	}
	if code, out := verify(r.oldLock, []string{"--key", r.oldPub + ",until=" + future}); code != cli.ExitUsage || !strings.Contains(out, "not-after=DATE") {
		t.Errorf("a malformed --key: exit %d, want %d:\n%s", code, cli.ExitUsage, out)
	}
}

// A version that semver would not order as the release it names is refused
// before anything is built, as a usage error naming it: without the "v",
// every consumer's advisory, support and downgrade checks would pass it by.
func TestAVersionThatIsNotVMajorMinorPatchIsRefusedBeforeBuilding(t *testing.T) {
	for _, v := range []string{"1.0.0", "v1.0", "v1.0.0+meta", "v01.0.0"} {
		dir := t.TempDir()
		for _, args := range [][]string{
			{"local", "--out", dir, "--no-scan", "--version", v},
			{"build", "--registry", "127.0.0.1:9/r", "--ubi-base", "127.0.0.1:9/ubi@sha256:" + strings.Repeat("a", 64), "--version", v, "--out", dir},
		} {
			code, out := run(t, args...)
			if code != cli.ExitUsage || !strings.Contains(out, "--version") || !strings.Contains(out, v) || !strings.Contains(out, "vMAJOR.MINOR.PATCH") {
				t.Errorf("%s --version %s: exit %d, want %d naming the version and the form:\n%s", args[0], v, code, cli.ExitUsage, out)
			}
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				t.Errorf("%s --version %s wrote %d entries to --out: it must be refused before building", args[0], v, len(entries))
			}
		}
	}
}
