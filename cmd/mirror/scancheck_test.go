package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/openvex/go-vex/pkg/vex"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/pipeline"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/gate"
	"github.com/reloader-dev/reloader/release/scancheck"
	"github.com/reloader-dev/reloader/release/verify"
	"github.com/reloader-dev/reloader/review"
	"github.com/reloader-dev/reloader/test/tools"
	"github.com/reloader-dev/reloader/test/trivydb"
)

// scannedModule is a module the controller links; the synthetic advisories
// are filed against the version go.sum pins.
const scannedModule = "k8s.io/client-go"

// scannedRelease is a release of the real controller made by the real
// pipeline with its real gate: Trivy, offline, with a generated database
// holding one advisory, and the release policy accepting it as a risk until
// expires. The release is cut on releasetest's default date, 2026-01-02,
// or yesterday when the exception still holds today.
type scannedRelease struct {
	rel     *releasetest.Release
	signer  releasetest.Signer
	key     string
	expires string
	// out is what the pipeline wrote: the page, its review and CSAF.
	out string
}

func publishScanned(t *testing.T, ctx context.Context, host, version, sev, exception string, seed uint64) (*scannedRelease, error) {
	t.Helper()
	trivy, err := tools.Binary(ctx, tools.Trivy, "trivy")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Version}}", scannedModule).Output()
	if err != nil {
		t.Fatal(err)
	}
	modVersion := strings.TrimSpace(string(out))
	work := t.TempDir()
	cut := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if exp, err := time.Parse(time.DateOnly, exception); err == nil && exp.After(time.Now()) {
		// An exception that holds today was approved within its lifetime
		// of today (release policies bound it): this release is cut
		// yesterday, with the approval.
		cut = time.Now().UTC().AddDate(0, 0, -1).Truncate(24 * time.Hour).Add(3 * time.Hour)
	}
	db, err := trivydb.Write(filepath.Join(work, "trivy-cache"), trivydb.Options{UpdatedAt: cut.Add(-time.Hour), Advisories: []trivydb.Advisory{{
		ID: "CVE-2099-2201", Module: scannedModule, Severity: sev, Vulnerable: []string{"<= " + strings.TrimPrefix(modVersion, "v")},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	base, err := os.ReadFile("../../release/gate/release-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pol := string(base)
	if exception != "" {
		pol = strings.Replace(pol, "exceptions: []", "exceptions:\n  - id: CVE-2099-2201\n    package: "+scannedModule+
			"\n    justification: the affected client path is never used by the controller\n    approvedBy: Jane Doe <jane.doe@example.com>\n    approvedOn: "+cut.Format(time.DateOnly)+"\n    expires: "+exception+"\n", 1)
	}
	polPath := filepath.Join(work, "release-policy.yaml")
	if err := os.WriteFile(polPath, []byte(pol), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(work, "out")
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: host, Signer: s, Seed: seed, Version: version, MainPackage: "./cmd/reloader", Created: cut, OutDir: outDir,
		Scan: &pipeline.ScanOptions{PolicyPath: polPath, Trivy: gate.TrivyOptions{Binary: trivy, CacheDir: db.CacheDir, SkipDBUpdate: true}}})
	if err != nil {
		return nil, err
	}
	key := filepath.Join(work, "cosign.pub")
	if err := os.WriteFile(key, s.PublicKeyPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	return &scannedRelease{rel: rel, signer: s, key: key, expires: exception, out: outDir}, nil
}

// The acceptance lines of issue 22 on the scan, on a real release: a
// release that passed its gate when it was cut, relying on an accepted risk
// that has expired since, is refused where it enters; the OpenVEX the
// release attests calls that accepted risk "affected"; a rescan with the
// user's own offline database lists an advisory published after the
// release, and --fail-on-new refuses it; and a finding of UNKNOWN severity
// stops a release by default.
func TestTheScanOfARealReleaseIsCheckedWhereItEnters(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds, scans and signs a release of the controller with the real Trivy")
	}
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	src := startRegistry(t)
	// The exception holds a month after the cut; the wall clock is long past it.
	sr, err := publishScanned(t, ctx, src.Host, "v1.2.3", "HIGH", "2026-02-01", 22)
	if err != nil {
		t.Fatalf("a release with an unexpired exception was refused when cut: %v", err)
	}
	l := sr.rel.Lock

	t.Run("the release passed when it was cut, accepting the finding", func(t *testing.T) {
		if !l.Scanned() || len(l.Scan.Exceptions) != 1 || l.Scan.Exceptions[0].ID != "CVE-2099-2201" || l.Scan.Exceptions[0].Kind != string(gate.KindAcceptedRisk) {
			t.Fatalf("scan record %+v: want the applied accepted risk", l.Scan)
		}
		if _, err := (scancheck.Policy{Now: l.Created}).Check(l); err != nil {
			t.Fatalf("judged on the day it was cut: %v", err)
		}
	})

	t.Run("an expired exception refuses a release that passed when it was cut", func(t *testing.T) {
		// Every command is held to it in TestEveryCommandRefusesWhatTheRulesRefuse,
		// on a record its signer wrote; these hold the record Trivy wrote to it.
		for _, cmd := range [][]string{
			{"verify", "--lock-ref", sr.rel.LockRef, "--key", sr.key},
			{"copy", "--lock-ref", sr.rel.LockRef, "--key", sr.key, "--target", startRegistry(t).Host + "/platform/reloader"},
			{"values", "--lock-ref", sr.rel.LockRef, "--key", sr.key, "--target", src.Host + "/platform/reloader"},
		} {
			code, _, stderr := runCLI(t, cmd...)
			if code != cli.ExitRefused {
				t.Errorf("%s: exit %d, want %d\n%s", cmd[0], code, cli.ExitRefused, stderr)
			}
			for _, want := range []string{"CVE-2099-2201", scannedModule, "expired 2026-02-01"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("%s: the refusal does not name %q:\n%s", cmd[0], want, stderr)
				}
			}
		}
		code, stdout, _ := runCLI(t, "verify", "--lock-ref", sr.rel.LockRef, "--key", sr.key, "-o", "json")
		var res struct {
			ScanCheck scancheck.Result `json:"scanCheck"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != cli.ExitRefused || res.ScanCheck.Passed || len(res.ScanCheck.Refusals) != 1 {
			t.Errorf("verify -o json: exit %d, %v, %+v\n%s", code, err, res.ScanCheck, stdout)
		}
		// reloader-release verify applies the same policy (release/verify).
		_, err := verify.Lock(ctx, sr.rel.LockJSON, sr.rel.LockBundle, verify.Options{Expect: sr.signer.Expect(), Scan: &scancheck.Policy{}})
		if !errors.Is(err, scancheck.ErrRefused) || cli.ExitCode(err) != cli.ExitRefused {
			t.Errorf("reloader-release verify's lock check: %v", err)
		}
	})

	t.Run("the attested and the regenerated OpenVEX call an accepted risk affected", func(t *testing.T) {
		idx := l.Find(release.KindImageIndex, "reloader")[0]
		doc := attestedVEX(t, ctx, idx)
		if len(doc.Statements) != 1 || doc.Statements[0].Status != vex.StatusAffected || !strings.Contains(doc.Statements[0].ActionStatement, "until 2026-02-01") {
			t.Fatalf("attested OpenVEX statements %+v: want one affected, naming the expiry", doc.Statements)
		}
		found := false
		for _, p := range doc.Statements[0].Products {
			found = found || p.ID == "pkg:oci/reloader@sha256%3A"+strings.TrimPrefix(idx.Digest, "sha256:")
		}
		if !found {
			t.Errorf("the statement does not name the index %s by digest: %+v", idx.Digest, doc.Statements[0].Products)
		}
		// review judges today: the exception has expired, so it is gone.
		out := t.TempDir()
		code, _, stderr := runCLI(t, "review", "--lock-ref", sr.rel.LockRef, "--key", sr.key, "--licence-policy", "../../review/licence-policy.yaml",
			"--out", out)
		data, err := os.ReadFile(filepath.Join(out, review.FileOpenVEX))
		if err != nil {
			t.Fatalf("review: exit %d, %v\n%s", code, err, stderr)
		}
		if regen, err := vex.Parse(data); err != nil || len(regen.Statements) != 0 {
			t.Errorf("the regenerated OpenVEX still states the expired exception: %v\n%s", err, data)
		}
	})

	t.Run("a rescan with the user's own database finds an advisory published after the release", func(t *testing.T) {
		// A release whose exception still holds today, so only the rescan
		// can refuse it; in a registry of its own, as the charts of two
		// releases signed by different keys share digests and .sig tags.
		cur, err := publishScanned(t, ctx, startRegistry(t).Host, "v1.2.4", "HIGH", time.Now().UTC().AddDate(0, 2, 0).Format(time.DateOnly), 24)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Version}}", scannedModule).Output()
		if err != nil {
			t.Fatal(err)
		}
		vuln := []string{"<= " + strings.TrimPrefix(strings.TrimSpace(string(out)), "v")}
		later, err := trivydb.Write(filepath.Join(t.TempDir(), "user-trivy-cache"), trivydb.Options{Advisories: []trivydb.Advisory{
			{ID: "CVE-2099-2201", Module: scannedModule, Severity: "HIGH", Vulnerable: vuln},
			{ID: "CVE-2099-2203", Module: scannedModule, Severity: "CRITICAL", Vulnerable: vuln, Title: "published after the release"},
		}})
		if err != nil {
			t.Fatal(err)
		}
		trivy, err := tools.Binary(ctx, tools.Trivy, "trivy")
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"verify", "--lock-ref", cur.rel.LockRef, "--key", cur.key, "--rescan", "--trivy", trivy, "--trivy-cache-dir", later.CacheDir}
		code, _, stderr := runCLI(t, args...)
		if code != cli.ExitOK || !strings.Contains(stderr, "NEW CRITICAL CVE-2099-2203") || strings.Contains(stderr, "NEW HIGH     CVE-2099-2201") {
			t.Fatalf("verify --rescan: exit %d; want CVE-2099-2203 listed as new and the recorded CVE-2099-2201 not:\n%s", code, stderr)
		}
		code, _, stderr = runCLI(t, append(args, "--fail-on-new", "HIGH,CRITICAL")...)
		if code != cli.ExitRefused || !strings.Contains(stderr, "CRITICAL CVE-2099-2203 in "+scannedModule) {
			t.Fatalf("verify --rescan --fail-on-new HIGH,CRITICAL: exit %d, want %d naming the new advisory:\n%s", code, cli.ExitRefused, stderr)
		}
	})

	t.Run("a finding of UNKNOWN severity blocks a release by default", func(t *testing.T) {
		_, err := publishScanned(t, ctx, src.Host, "v1.2.5", "UNKNOWN", "", 23)
		if !errors.Is(err, gate.ErrRefused) || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("a release with an unscored finding and no decision about it: %v", err)
		}
	})
}

// attestedVEX is the OpenVEX predicate among the cosign attestations (.att)
// of a key-signed release's artifact.
func attestedVEX(t *testing.T, ctx context.Context, a release.Artifact) *vex.VEX {
	t.Helper()
	ref, err := name.NewTag(fmt.Sprintf("%s:sha256-%s.att", a.Repository, strings.TrimPrefix(a.Digest, "sha256:")))
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(ref, remote.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, ly := range layers {
		rc, err := ly.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		var env struct{ Payload string }
		err = json.NewDecoder(rc).Decode(&env)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		payload, err := base64.StdEncoding.DecodeString(env.Payload)
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			PredicateType string          `json:"predicateType"`
			Predicate     json.RawMessage `json:"predicate"`
		}
		if err := json.Unmarshal(payload, &st); err != nil {
			t.Fatal(err)
		}
		if st.PredicateType == pipeline.PredicateOpenVEX {
			doc, err := vex.Parse(st.Predicate)
			if err != nil {
				t.Fatalf("the attested OpenVEX does not parse: %v", err)
			}
			return doc
		}
	}
	t.Fatalf("%s %s carries no %s attestation", a.Kind, a.Digest, pipeline.PredicateOpenVEX)
	return nil
}
