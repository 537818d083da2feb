package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
)

func TestVerifyRefusesAScanPolicyItCannotRead(t *testing.T) {
	key := filepath.Join(t.TempDir(), "cosign.pub")
	if err := os.WriteFile(key, []byte("-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ flag, value string }{{"--max-scan-age", "3weeks"}, {"--max-scan-age", "0d"}, {"--fail-on-severity", "HIGH,SEVERE"}} {
		if code, out := run(t, "verify", "--lock", "x.json", "--key", key, c.flag, c.value); code != cli.ExitUsage || !strings.Contains(out, c.flag) {
			t.Errorf("%s %s: exit %d, want %d naming the flag\n%s", c.flag, c.value, code, cli.ExitUsage, out)
		}
	}
}

func TestPublishRefusesToGateWithADatabaseOfAnyAge(t *testing.T) {
	code, out := run(t, "publish", "--registry", "127.0.0.1:1/x", "--version", "v1.2.3", "--ubi-base", "x@sha256:"+strings.Repeat("a", 64),
		"--trivy", "trivy", "--key", "k", "--skip-db-update", "--max-db-age", "0s")
	if code != cli.ExitUsage || !strings.Contains(out, "--max-db-age") {
		t.Fatalf("--max-db-age 0s: exit %d\n%s", code, out)
	}
}
