package airgap_test

import (
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/internal/exitcode"
	"github.com/reloader-dev/reloader/publish/local"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/test/airgap"
	"github.com/reloader-dev/reloader/test/chartrun"
	"github.com/reloader-dev/reloader/test/registry"
	"github.com/reloader-dev/reloader/test/tools"
	"github.com/reloader-dev/reloader/test/trivydb"
)

var updateReadme = flag.Bool("update-commands", false, "rewrite testdata/commands.sh from the drill's commands")

const (
	version = "v1.2.3"
	// versionV2 is the release the drill upgrades to.
	versionV2 = "v1.2.4"
	// linkedModule is a module the controller really links; the advisory
	// is filed against it at the version go.sum pins.
	linkedModule = "k8s.io/client-go"
	advisoryID   = "CVE-2099-4242"
	commandsFile = "testdata/commands.sh"
)

// drill holds what the steps share.
type drill struct {
	t                  *testing.T
	ctx                context.Context
	rec                *airgap.Recorder
	root, work         string
	releaseBin, mirror string
	trivy              string
	regA, regC         *registry.Registry
	regB               *registry.Registry
	bAdmin             registry.Credential
	linkedVersion      string
	created            time.Time
	db                 *trivydb.DB
	pubKey             string
	lock               *release.Lock
	archive            string
	valuesFile         string
	policyDir          string
	policyKubeconfig   string
	// controller is the running controller, v1 until the upgrade.
	controller *chartrun.Controller
	// delta and valuesV2 are the upgrade's archive and values.
	delta, valuesV2 string
}

// The air-gap drill, as a user runs it, on the real pipeline's real output
// with no network: see the package documentation and README.md.
func TestAirGapDrill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds, scans, mirrors and installs a whole release")
	}
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	d := &drill{t: t, ctx: ctx, root: root, work: t.TempDir()}
	d.rec = &airgap.Recorder{Log: testLog{t}, Replace: map[string]string{d.work + "/": "", d.work: "."}}
	start := time.Now()
	defer func() {
		var b strings.Builder
		for _, s := range d.rec.Steps {
			fmt.Fprintf(&b, "  %-60s %8s\n", s.Name, s.Duration.Round(10*time.Millisecond))
		}
		t.Logf("drill steps (total %s):\n%s", time.Since(start).Round(time.Second), b.String())
	}()

	must := func(name string, fn func() error) {
		t.Helper()
		if err := d.rec.Step(name, fn); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	must("setup: build reloader-release and reloader-mirror, start registries A, B, C", d.setup)
	must("setup: offline Trivy DB with a HIGH advisory for "+linkedModule, d.writeDB)
	must("(a,b) release refused: HIGH advisory, no exception", d.refusedNoException)
	must("(b) release refused: the exception has expired", d.refusedExpired)
	must("(b) registry A holds nothing of the refused release", d.registryAHoldsNothing)
	must("(a,b) release passes: exception with a future expiry", d.passWithException)
	must("(d) the lock records the scan and the exception", d.lockRecordsScan)
	must("(e) export the release to one archive", d.export)
	must("(e) import into registry B (distribution, token auth)", d.importB)
	must("(e) import into registry C (referrers API)", d.importC)
	must("(e) values for registry B", d.values)
	must("(e) admission policy for registry B, enforced before the install", d.enforce)
	must("(e) helm install from B by digest, controller rolls a Deployment", d.install)
	must("(f) tampered archives are refused with exit 3", d.tamper)
	must("(f) forged keyless archive is refused with exit 3", d.forgedKeyless)
	must("(e) with the policies removed, policy check exits 3 naming what was admitted", d.policiesRemoved)
	must("(g) release "+versionV2+" (a new build, signed with the same key)", d.releaseV2)
	must("(g) export "+versionV2+" --since "+version+": only what "+version+" lacks", d.exportDelta)
	must("(g) the delta is refused where "+version+" is not, nothing pushed", d.deltaRefusedOnEmpty)
	must("(g) import the delta into registry B, which holds "+version, d.importDelta)
	must("(g) values for "+versionV2, d.valuesV2Step)
	must("(g) helm upgrade by digest; a ConfigMap changed during the controller's rollout is applied once", d.upgrade)

	got := d.rec.Script()
	if *updateReadme {
		if err := os.WriteFile(commandsFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(commandsFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("the drill's commands changed; run `go test ./test/airgap -run TestAirGapDrill -update-commands` and update README.md.\ngot:\n%s\nwant:\n%s", got, want)
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func (d *drill) setup() error {
	bin := filepath.Join(d.work, "bin")
	for _, b := range []struct{ out, pkg string }{{"reloader-release", "./cmd/release"}, {"reloader-mirror", "./cmd/mirror"}} {
		if err := tools.GoBuild(d.ctx, b.pkg, filepath.Join(bin, b.out)); err != nil {
			return err
		}
	}
	d.releaseBin, d.mirror = filepath.Join(bin, "reloader-release"), filepath.Join(bin, "reloader-mirror")
	// Every release of the drill is stamped with one time, as CI stamps a
	// release with SOURCE_DATE_EPOCH, whatever HEAD becomes meanwhile.
	cmd := exec.CommandContext(d.ctx, "git", "log", "-1", "--format=%ct")
	cmd.Dir = d.root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("reading the commit time: %w", err)
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return err
	}
	d.created = time.Unix(sec, 0).UTC()
	d.rec.Env = append(d.rec.Env, "SOURCE_DATE_EPOCH="+strconv.FormatInt(sec, 10))
	if d.trivy, err = tools.Binary(d.ctx, tools.Trivy, "trivy"); err != nil {
		return err
	}
	d.rec.Replace[d.trivy] = "trivy"
	if d.regA, err = registry.StartInProcess(registry.InProcessOptions{}); err != nil {
		return err
	}
	d.t.Cleanup(func() { _ = d.regA.Stop() })
	if d.regC, err = registry.StartInProcess(registry.InProcessOptions{}); err != nil {
		return err
	}
	d.t.Cleanup(func() { _ = d.regC.Stop() })
	// Registry B is Harbor-shaped: bearer tokens scoped per repository. The
	// mirror's account may push and pull under platform/; only an admin may
	// list the catalog.
	mirrorUser := registry.Credential{Username: "mirror", Password: "mirror-secret"}
	d.bAdmin = registry.Credential{Username: "admin", Password: "admin-secret"}
	ti, err := registry.NewTokenIssuer(registry.TokenIssuerOptions{Users: map[string]registry.User{
		mirrorUser.Username: {Password: mirrorUser.Password, Grants: []registry.Grant{{Repository: "platform/*", Actions: []string{"push", "pull"}}}},
		d.bAdmin.Username:   {Password: d.bAdmin.Password, Catalog: true, Grants: []registry.Grant{{Repository: "*", Actions: []string{"pull"}}}},
	}})
	if err != nil {
		return err
	}
	if d.regB, err = registry.StartDistributionWith(d.ctx, filepath.Join(d.work, "registry-b"), registry.DistributionOptions{Token: ti}); err != nil {
		return err
	}
	d.t.Cleanup(func() { _ = d.regB.Stop() })
	// The mirror finds its credentials where users keep them.
	dockerConfig := filepath.Join(d.work, "docker")
	if err := registry.WriteDockerConfig(dockerConfig, map[string]registry.Credential{d.regB.Host: mirrorUser}); err != nil {
		return err
	}
	d.rec.Env = append(d.rec.Env, "DOCKER_CONFIG="+dockerConfig)
	d.t.Setenv("DOCKER_CONFIG", dockerConfig)
	d.rec.Replace[d.regA.Host] = "registry.example"
	d.rec.Replace[d.regB.Host] = "harbor.internal"
	d.rec.Replace[d.regC.Host] = "artifactory.internal"
	return nil
}

func (d *drill) writeDB() error {
	cmd := exec.CommandContext(d.ctx, "go", "list", "-m", "-f", "{{.Version}}", linkedModule)
	cmd.Dir = d.root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go list -m %s: %w", linkedModule, err)
	}
	d.linkedVersion = strings.TrimSpace(string(out))
	sum, err := os.ReadFile(filepath.Join(d.root, "go.sum"))
	if err != nil {
		return err
	}
	if !strings.Contains(string(sum), linkedModule+" "+d.linkedVersion+" ") {
		return fmt.Errorf("%s %s is not pinned in go.sum", linkedModule, d.linkedVersion)
	}
	d.db, err = trivydb.Write(filepath.Join(d.work, "trivy-cache"), trivydb.Options{Advisories: []trivydb.Advisory{{
		ID: advisoryID, Module: linkedModule, Severity: "HIGH", Title: "synthetic advisory for the air-gap drill",
		Vulnerable: []string{"<= " + strings.TrimPrefix(d.linkedVersion, "v")}, Patched: []string{"99.0.0"},
	}}})
	return err
}

// writePolicy writes the release policy with an exception for the drill's
// advisory expiring on expires (none if zero).
func (d *drill) writePolicy(file string, expires time.Time) (string, error) {
	base, err := os.ReadFile(filepath.Join(d.root, "release", "gate", "release-policy.yaml"))
	if err != nil {
		return "", err
	}
	pol := string(base)
	if !expires.IsZero() {
		pol = strings.Replace(pol, "exceptions: []", fmt.Sprintf(`exceptions:
  - id: %s
    package: %s
    justification: the drill's synthetic advisory; the affected code path is not reached
    approvedBy: the drill
    approvedOn: %s
    expires: %s`, advisoryID, linkedModule, expires.AddDate(0, 0, -60).Format(time.DateOnly), expires.Format(time.DateOnly)), 1)
		if pol == string(base) {
			return "", errors.New("the release policy no longer says exceptions: []")
		}
	}
	p := filepath.Join(d.work, file)
	return p, os.WriteFile(p, []byte(pol), 0o644)
}

// release runs `reloader-release local` the way a user does, from the
// checkout, into registry A.
func (d *drill) release(out, policyFile string, doc bool, comment string, extra ...string) (airgap.Result, error) {
	v := version
	if len(extra) > 0 && extra[0] == "--version" {
		v, extra = extra[1], extra[2:]
	}
	// The release ships a support table listing its series, as the
	// project's release/support.yaml must before a release is cut.
	table, err := releasetest.WriteSupportTable(d.work, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), v)
	if err != nil {
		return airgap.Result{}, err
	}
	return d.rec.Run(d.ctx, airgap.Command{Dir: d.root, Path: d.releaseBin, Doc: doc, Comment: comment, Args: append([]string{
		"local", "--platforms", "linux/amd64", "--registry", d.regA.Host, "--version", v,
		"--trivy", d.trivy, "--trivy-cache-dir", d.db.CacheDir, "--skip-db-update",
		"--policy", policyFile, "--support", table, "--out", filepath.Join(d.work, out)}, extra...)})
}

func (d *drill) refused(out string, expires time.Time) error {
	pol, err := d.writePolicy(out+"-policy.yaml", expires)
	if err != nil {
		return err
	}
	res, err := d.release(out, pol, false, "")
	if err != nil {
		return err
	}
	if res.Code != int(exitcode.Refused) {
		return fmt.Errorf("release: exit %d, want %d (refused)\n%s", res.Code, int(exitcode.Refused), tail(res.Stderr))
	}
	if !strings.Contains(res.Stderr, advisoryID) {
		return fmt.Errorf("the refusal does not name %s:\n%s", advisoryID, tail(res.Stderr))
	}
	d.t.Logf("refused as it should be:\n%s", tail(res.Stderr))
	return nil
}

func (d *drill) refusedNoException() error { return d.refused("refused", time.Time{}) }

func (d *drill) refusedExpired() error {
	return d.refused("expired", time.Now().UTC().AddDate(0, 0, -1))
}

// registryAHoldsNothing checks the catalog, and every manifest and blob the
// refused runs built (their OCI layouts) by digest.
func (d *drill) registryAHoldsNothing() error {
	reg, err := name.NewRegistry(d.regA.Host, name.Insecure)
	if err != nil {
		return err
	}
	repos, err := remote.Catalog(d.ctx, reg)
	if err != nil {
		return fmt.Errorf("listing registry A: %w", err)
	}
	d.t.Logf("registry A after the refused releases: catalog %v", repos)
	for _, r := range repos {
		if strings.HasPrefix(r, "reloader-dev/") {
			return fmt.Errorf("registry A lists %s after a refused release", r)
		}
	}
	// `local` pushed its stand-in UBI base before building (a base is
	// pulled, not released); its blobs are the only ones registry A may
	// hold, and go-containerregistry's registry shares blobs across
	// repositories.
	base, err := standInBaseDigests(d.created)
	if err != nil {
		return err
	}
	checked := 0
	imageRepos := []string{"reloader-dev/reloader", "reloader-dev/reloader-ubi", "reloader-dev/reloader-fips", "reloader-dev/reloader-ubi-fips"}
	for _, out := range []string{"refused", "expired"} {
		digests, err := layoutDigests(filepath.Join(d.work, out))
		if err != nil {
			return err
		}
		for _, h := range digests {
			if base[h] {
				continue
			}
			for _, repo := range imageRepos {
				for _, kind := range []string{"manifests", "blobs"} {
					url := fmt.Sprintf("http://%s/v2/%s/%s/%s", d.regA.Host, repo, kind, h)
					resp, err := http.Head(url)
					if err != nil {
						return err
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusNotFound {
						return fmt.Errorf("HEAD %s: %s, want 404", url, resp.Status)
					}
					checked++
				}
			}
		}
		for _, repo := range append(imageRepos, "reloader-dev/"+release.LockRepository) {
			r, err := name.NewRepository(d.regA.Host+"/"+repo, name.Insecure)
			if err != nil {
				return err
			}
			tags, err := remote.List(r, remote.WithContext(d.ctx))
			if err == nil && len(tags) > 0 {
				return fmt.Errorf("registry A has tags %v in %s", tags, repo)
			}
		}
	}
	if checked == 0 {
		return errors.New("the refused releases left no OCI layout to check against")
	}
	d.t.Logf("registry A: %d manifest and blob digests of the refused builds checked, all 404; no reloader-dev repository, no tag", checked/(2*len(imageRepos)))
	return nil
}

// standInBaseDigests are the blob digests of the stand-in UBI base
// `reloader-release local` builds for the release time created.
func standInBaseDigests(created time.Time) (map[string]bool, error) {
	idx, err := local.StandInBase(context.Background(), created)
	if err != nil {
		return nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, m := range im.Manifests {
		img, err := idx.Image(m.Digest)
		if err != nil {
			return nil, err
		}
		ls, err := img.Layers()
		if err != nil {
			return nil, err
		}
		for _, l := range ls {
			h, err := l.Digest()
			if err != nil {
				return nil, err
			}
			set[h.String()] = true
		}
	}
	return set, nil
}

// layoutDigests are every manifest, config and layer digest in the OCI
// layouts under dir.
func layoutDigests(dir string) ([]string, error) {
	var layouts []string
	_ = filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && e.Name() == "oci-layout" {
			layouts = append(layouts, filepath.Dir(p))
		}
		return nil
	})
	if len(layouts) == 0 {
		return nil, fmt.Errorf("no OCI layout under %s", dir)
	}
	var out []string
	for _, l := range layouts {
		blobs, err := os.ReadDir(filepath.Join(l, "blobs", "sha256"))
		if err != nil {
			return nil, err
		}
		for _, b := range blobs {
			out = append(out, "sha256:"+b.Name())
		}
		if _, err := layout.FromPath(l); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (d *drill) passWithException() error {
	pol, err := d.writePolicy("policy.yaml", time.Now().UTC().AddDate(0, 1, 0))
	if err != nil {
		return err
	}
	res, err := d.release("release", pol, true, "build, scan in a local OCI layout, and only if the gate passes push, sign and write the lock")
	if err != nil {
		return err
	}
	if res.Code != int(exitcode.OK) {
		return fmt.Errorf("release with a current exception: exit %d\n%s", res.Code, tail(res.Stderr))
	}
	d.pubKey = filepath.Join(d.work, "release", "keys", "cosign.pub")
	data, err := os.ReadFile(filepath.Join(d.work, "release", release.LockFileName))
	if err != nil {
		return err
	}
	d.lock = &release.Lock{}
	return json.Unmarshal(data, d.lock)
}

func (d *drill) lockRecordsScan() error {
	sc := d.lock.Scan
	if sc == nil || sc.Skipped {
		return fmt.Errorf("lock scan record %+v", sc)
	}
	if sc.Scanner != "trivy" || sc.ScannerVersion == "" {
		return fmt.Errorf("lock names scanner %q %q", sc.Scanner, sc.ScannerVersion)
	}
	if sc.DBDigest != "sha256:"+d.db.SHA256 && sc.DBDigest != d.db.SHA256 {
		return fmt.Errorf("lock records DB %s, the drill's DB is %s", sc.DBDigest, d.db.SHA256)
	}
	if !sc.DBBuilt.Equal(d.db.UpdatedAt) {
		return fmt.Errorf("lock records DB built %s, want %s", sc.DBBuilt, d.db.UpdatedAt)
	}
	if sc.Counts["HIGH"] == 0 {
		return fmt.Errorf("lock counts %v: the HIGH finding is not counted", sc.Counts)
	}
	if len(sc.Exceptions) != 1 || sc.Exceptions[0].ID != advisoryID || sc.Exceptions[0].Package != linkedModule {
		return fmt.Errorf("lock exceptions %+v", sc.Exceptions)
	}
	d.t.Logf("lock scan: trivy %s, DB %s built %s, counts %v, exceptions %+v", sc.ScannerVersion, sc.DBDigest, sc.DBBuilt, sc.Counts, sc.Exceptions)
	// The install step checks that the mirrored binary links the advised
	// module at that version.
	return nil
}

func linksAt(bin, module, version string) bool {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return false
	}
	for _, m := range bi.Deps {
		if m.Path == module && m.Version == version {
			return true
		}
	}
	return false
}

func (d *drill) runMirror(comment string, doc bool, stdoutFile string, args ...string) (airgap.Result, error) {
	return d.rec.Run(d.ctx, airgap.Command{Dir: d.work, Path: d.mirror, Args: args, Doc: doc, Comment: comment, StdoutFile: stdoutFile})
}

func (d *drill) mustMirror(comment string, stdoutFile string, args ...string) (airgap.Result, error) {
	res, err := d.runMirror(comment, comment != "", stdoutFile, args...)
	if err != nil {
		return res, err
	}
	if res.Code != int(exitcode.OK) {
		return res, fmt.Errorf("reloader-mirror %s: exit %d\n%s", strings.Join(args, " "), res.Code, tail(res.Stderr))
	}
	return res, nil
}

func (d *drill) export() error {
	d.archive = filepath.Join(d.work, "reloader-"+version+".tar")
	_, err := d.mustMirror("connected side: verify the release and pack it into one file",
		"", "export", "--lock-ref", d.regA.Host+"/reloader-dev/"+release.LockRepository+":"+version, "--key", d.pubKey, "--to", d.archive)
	return err
}

func (d *drill) importB() error {
	_, err := d.mustMirror("disconnected side: verify offline, push by digest (credentials from DOCKER_CONFIG), tags last",
		"", "import", "-f", d.archive, "--key", d.pubKey, "--target", d.regB.Host+"/platform/reloader", "--receipt", filepath.Join(d.work, "receipt.json"))
	return err
}

func (d *drill) importC() error {
	_, err := d.mustMirror("", "", "import", "-f", d.archive, "--key", d.pubKey, "--target", d.regC.Host+"/platform/reloader")
	if err != nil {
		return err
	}
	// Registry C serves the referrers API: every OCI referrer the lock lists
	// (an artifact with a subject and an artifactType: SBOMs, Sigstore
	// bundles) is found there as a referrer of its subject.
	n := 0
	for _, a := range d.lock.Artifacts {
		if a.ArtifactType == "" || a.Subject == "" {
			continue
		}
		_, path, _ := strings.Cut(a.Repository, "/reloader-dev/")
		ref, err := name.NewDigest(d.regC.Host+"/platform/reloader/"+path+"@"+a.Subject, name.Insecure)
		if err != nil {
			return err
		}
		refs, err := remote.Referrers(ref, remote.WithContext(d.ctx))
		if err != nil {
			return fmt.Errorf("referrers of %s in registry C: %w", ref, err)
		}
		m, err := refs.IndexManifest()
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(m.Manifests, func(desc v1.Descriptor) bool { return desc.Digest.String() == a.Digest }) {
			return fmt.Errorf("registry C does not list %s %s (%s) as a referrer of %s", a.Kind, a.Digest, a.ArtifactType, ref)
		}
		n++
	}
	if n == 0 {
		var kinds []string
		for _, a := range d.lock.Artifacts {
			kinds = append(kinds, fmt.Sprintf("%s/%s/%s", a.Kind, a.ArtifactType, a.Subject))
		}
		return fmt.Errorf("the lock lists no OCI referrer: %v", kinds)
	}
	d.t.Logf("registry C lists all %d OCI referrers of the lock under their subjects", n)
	return nil
}

func (d *drill) values() error {
	d.valuesFile = filepath.Join(d.work, "values.yaml")
	_, err := d.mustMirror("the digest-pinned Helm values (and install command) for that registry", d.valuesFile,
		"values", "-f", d.archive, "--key", d.pubKey, "--target", d.regB.Host+"/platform/reloader")
	return err
}

func tail(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n")
}
