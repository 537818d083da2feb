package main

import (
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/sign"
)

// publish signs a key release in both forms unless told otherwise: Sigstore
// bundle referrers for cosign v3 (and v4, which reads only those) and the
// .sig/.att tags CRI-O reads. An unknown format, or tags alone for a keyless
// release, is refused before anything runs.
func TestPublishSignsInBothFormsByDefaultAndRefusesWhatItCannotSign(t *testing.T) {
	if def := newPublishCmd().Flags().Lookup("signature-format").DefValue; def != string(sign.FormatBoth) {
		t.Errorf("--signature-format defaults to %q, want %q", def, sign.FormatBoth)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "1764500000")
	common := []string{"publish", "--registry", "registry.example/reloader", "--version", "v1.2.3", "--commit", strings.Repeat("a", 40),
		"--ubi-base", "registry.example/ubi@sha256:" + strings.Repeat("b", 64), "--trivy", "trivy", "--out", t.TempDir(),
		"--license-file", "../../LICENSE"}
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"an unknown format":           {[]string{"--key", "cosign.key", "--signature-format", "sig"}, "bundle, legacy, both"},
		"tags alone, signing keyless": {[]string{"--keyless", "--signature-format", "legacy"}, "needs --key"},
	} {
		if code, out := run(t, append(common, c.args...)...); code != cli.ExitUsage || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d, want %d naming %q\n%s", name, code, cli.ExitUsage, c.want, out)
		}
	}
}
