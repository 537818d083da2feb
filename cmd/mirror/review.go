package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/gate"
	"github.com/reloader-dev/reloader/release/provenance"
	"github.com/reloader-dev/reloader/release/trust"
	"github.com/reloader-dev/reloader/review"

	"github.com/reloader-dev/reloader/internal/exitcode"
)

// reviewFailed is a review that fails a --fail-on check. It is a refusal
// (exit 3) like a failed gate: what it names must not be approved.
type reviewFailed struct{ failures []string }

func (e reviewFailed) Error() string {
	return "the review fails --fail-on: " + strings.Join(e.failures, "; ")
}

// ExitCode makes a failed review a refusal: what it names must not ship.
func (e reviewFailed) ExitCode() exitcode.Code { return exitcode.Refused }

type reviewFlags struct {
	out, against, gate, againstGate, releasePolicy, licencePolicy string
	failOn                                                        []string
	printLicencePolicy, verify                                    bool

	profile string
}

// reviewHelp is review's --help: what it checks and each file it writes.
const reviewHelp = `review verifies a release exactly like verify (the lock's signature and every
signature it lists, offline, against your trust policy), then reads the
SBOMs the lock lists and writes, into --out:

  index.html      one self-contained page (no external fetch; opens from disk
                  without network): release identity, licence chart,
                  licence findings, each component once with the images
                  and platforms carrying it (filtered per image),
                  vulnerabilities and exceptions, SBOM minimum elements
                  (--profile), the SSDF evidence map, and the changes
                  since --against
  review.md       the same in Markdown
  components.csv  one row per component, naming the images carrying it
  review.json     the whole review for scripts
  openvex.json    the unexpired vulnerability exceptions as OpenVEX
                  (trivy image --vex openvex.json ...)

Licences are normalised to SPDX and judged by the licence policy: allowed,
not-allowed, denied, unknown (not valid SPDX) and noassertion (the SBOM
states none); all but allowed are findings. The policy is built into the
binary (--print-licence-policy prints it); --licence-policy replaces it with
a file. Its osPackages lists judge the base image's OS packages (RPMs) apart
from the modules linked into our binaries.

Every SBOM is checked, document and each component, against the minimum
elements of --profile: ntia-2021 (NTIA 2021), cisa-2025 (CISA's 2025 draft:
adds component hash, licence, tool name, generation context),
bsi-tr-03183-2 (BSI TR-03183-2 v2.1.0: creator contacts, the SBOM's URI,
per component the file name, the SHA-512, URI and executable, archive and
structured properties of the file it is deployed in, source URI, original
and concluded licences, and no vulnerability data in the SBOM; checked on
CycloneDX 1.6 or later, as v2.1.0 allows no SPDX 2) or bsi-tr-03183-2@v1.1
(the previous version). The default is cisa-2025, which every format is
checked against; our releases pass bsi-tr-03183-2 too. A field an SBOM lacks
is missing even when nobody could know it, and the review names the
components.

The vulnerability scan is read from the signed lock: scanner and version,
database digest and build time, findings by severity, and the exceptions the
gate applied (with justification and expiry). --gate-report adds each finding
(gate.json, written by the release pipeline next to the lock) and must agree
with the lock; --release-policy adds the exceptions it holds beyond those.

The release pipeline signs its own review: an attestation of predicate type
` + review.PredicateType + ` on each image index, signed like the
SBOMs, holding the review and the sha256 of its page. --verify checks it
under the same trust policy, recomputes that review from the release given
(the SBOMs, provenance and lock), and refuses (exit 3, nothing written) when
an index carries none or when it differs, naming the index and the first
differing field. The page the release published is then the one whose
sha256 --verify prints.

A check named by --fail-on that fails exits 3 (refused) after the review is
written; stderr names the checks. A release that does not verify also exits
3, and then no review is written.`

const reviewExamples = `  # Review an archive carried across the air gap
  reloader-mirror review -f reloader-v1.2.3.tar.zst --key cosign.pub --out review-v1.2.3

  # What changed since the approved v1.2.2, with the gate's findings
  reloader-mirror review -f reloader-v1.2.3.tar.zst --key cosign.pub \
      --gate-report gate.json --release-policy release-policy.yaml \
      --against reloader-v1.2.2.tar.zst --out review-v1.2.3

  # Check the review the release signed is the review of this archive
  reloader-mirror review -f reloader-v1.2.3.tar.zst --key cosign.pub --verify --out review-v1.2.3

  # In a pipeline: fail when a licence or an SBOM is not acceptable
  reloader-mirror review --lock-ref harbor.corp.example/platform/reloader/reloader-release:v1.2.3 \
      --key cosign.pub --out review --fail-on licence,minimum-elements -o json

  # Hold the SBOMs to BSI TR-03183-2 v2.1.0 instead of the default cisa-2025
  reloader-mirror review -f reloader-v1.2.3.tar.zst --key cosign.pub --out review \
      --fail-on minimum-elements --profile bsi-tr-03183-2`

// reviewCmd is the review subcommand and its flags.
func (a *app) reviewCmd() *cobra.Command {
	g := a.command()
	f := &reviewFlags{}
	c := &cobra.Command{
		Use:     "review",
		Short:   "Write a procurement review of a release (HTML, Markdown, CSV, OpenVEX), verified offline",
		Long:    reviewHelp + cli.ExitCodesHelp,
		Example: reviewExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.printLicencePolicy {
				_, err := cmd.OutOrStdout().Write(review.DefaultLicencePolicyYAML())
				return err
			}
			checks, err := review.ParseChecks(f.failOn)
			if err != nil {
				return cli.Usage(err)
			}
			profile, err := review.ParseProfile(f.profile)
			if err != nil {
				return cli.Usage(err)
			}
			if f.out == "" {
				return cli.Usage(errors.New("review needs --out"))
			}
			// A review reports the scan as it stands today (an expired
			// exception is marked and never emitted as OpenVEX) rather
			// than refusing to look at the release.
			g.reviewing = true
			return g.withRelease(cmd, func(cl *registry.Client, in *releaseInput) error {
				return g.runReview(cmd.Context(), cl, in, f, checks, profile)
			})
		},
	}
	g.releaseFlags(c)
	fl := c.Flags()
	fl.StringVar(&f.out, "out", "", "directory to write the review into")
	fl.StringVar(&f.against, "against", "", "previous release to compare with: an archive, or a lock in a registry (repo:tag)")
	fl.StringVar(&f.gate, "gate-report", "", "the release gate's full result (gate.json), for each finding; the lock's scan record must agree with it")
	fl.StringVar(&f.againstGate, "against-gate-report", "", "the previous release's gate.json, for new and resolved vulnerabilities")
	fl.StringVar(&f.releasePolicy, "release-policy", "", "release policy whose exceptions (justification, expiry) the review lists")
	fl.StringVar(&f.licencePolicy, "licence-policy", "", "licence policy file (allow and deny lists of SPDX identifiers) replacing the built-in one")
	fl.BoolVar(&f.printLicencePolicy, "print-licence-policy", false, "print the built-in licence policy and exit (a starting point for --licence-policy)")
	fl.StringVar(&f.profile, "profile", string(review.DefaultProfile), "SBOM minimum elements to check: ntia-2021, cisa-2025, bsi-tr-03183-2 (v2.1.0) or bsi-tr-03183-2@v1.1")
	fl.StringSliceVar(&f.failOn, "fail-on", nil, "exit 3 (refused) when these checks fail: licence, minimum-elements, vulnerability")
	fl.BoolVar(&f.verify, "verify", false, "verify the review the release signed on each image index and that it is this release's (exit 3 when not)")
	return c
}

// runReview verifies the release, builds the review, holds it to --verify,
// writes it, then applies --fail-on. It stays whole because the order is the
// promise: nothing is written for a release or a signed review that does
// not verify, and a failed check exits 3 only after the review is written.
func (g *command) runReview(ctx context.Context, cl *registry.Client, in *releaseInput, f *reviewFlags, checks []string, profile review.Profile) error {
	lp, err := licencePolicy(f.licencePolicy)
	if err != nil {
		return cli.Usage(err)
	}
	var rp *gate.Policy
	if f.releasePolicy != "" {
		if rp, err = gate.ReadPolicy(f.releasePolicy); err != nil {
			return cli.Usage(err)
		}
	}
	now := time.Now()
	cur, l, err := g.reviewRelease(ctx, in, lp, rp, f.gate, now, profile)
	if err != nil {
		return err
	}
	var signed *signedReviewResult
	if f.verify {
		if signed, err = verifySignedReview(cur.signed, cur.input); err != nil {
			return signedReviewRefused{err}
		}
	}
	if f.against != "" {
		old, err := g.openAgainst(ctx, cl, f.against, in)
		if err != nil {
			return err
		}
		defer old.close()
		prev, _, err := g.reviewRelease(ctx, old, lp, rp, f.againstGate, now, profile)
		if err != nil {
			return fmt.Errorf("reviewing the release to compare with (%s): %w", f.against, err)
		}
		cur.Diff = review.Compare(prev.Review, cur.Review)
	}
	failures := cur.Failures(checks)
	if err := review.Write(f.out, l, cur.Review, failures); err != nil {
		return err
	}
	files := []string{review.FileHTML, review.FileMD, review.FileCSV, review.FileJSON, review.FileOpenVEX}
	for i, n := range files {
		files[i] = filepath.Join(f.out, n)
	}
	out := struct {
		Directory    string              `json:"directory"`
		Files        []string            `json:"files"`
		Failures     []string            `json:"failures"`
		SignedReview *signedReviewResult `json:"signedReview,omitempty"`
		Review       *review.Review      `json:"review"`
	}{f.out, files, failures, signed, cur.Review}
	if out.Failures == nil {
		out.Failures = []string{}
	}
	if err := g.emit(out, func(w io.Writer) {
		writeReviewSummary(w, cur.Review, f.out)
		if signed != nil {
			fmt.Fprintf(w, "  signed review verified on %d image indexes and equal to this release's; its page is sha256 %s\n", len(signed.Indexes), signed.HTMLDigest)
		}
	}); err != nil {
		return err
	}
	if len(failures) > 0 {
		return reviewFailed{failures}
	}
	return nil
}

// licencePolicy reads the policy file given, or the built-in policy when
// none is: the review must run from any directory, not only a source tree.
func licencePolicy(path string) (*review.LicencePolicy, error) {
	if path == "" {
		return review.DefaultLicencePolicy()
	}
	return review.ReadLicencePolicy(path)
}

func writeReviewSummary(w io.Writer, r *review.Review, dir string) {
	incomplete := 0
	for _, s := range r.MinimumElements {
		if len(s.Missing) > 0 {
			incomplete++
		}
	}
	gate := "vulnerability gate " + r.Vulnerabilities.Status()
	if sc := r.Vulnerabilities.Scan; sc != nil && !sc.Skipped {
		gate += fmt.Sprintf(" (%s %s in the lock)", sc.Scanner, sc.ScannerVersion)
	}
	if r.Vulnerabilities.GateReport {
		gate += fmt.Sprintf(", %d findings in the gate report", len(r.Vulnerabilities.Findings))
	}
	fmt.Fprintf(w, "Review of %s (%s) written to %s\n", r.Release.Version, r.Release.Verification, filepath.Join(dir, review.FileHTML))
	fmt.Fprintf(w, "  %d images, %d components, %d licences, %d licence findings\n", len(r.Images), len(r.Components), len(r.Licences), len(r.LicenceFindings))
	fmt.Fprintf(w, "  SBOMs lacking %s minimum elements: %d of %d; %s; %d exceptions\n", r.Profile, incomplete, len(r.MinimumElements), gate, len(r.Vulnerabilities.Exceptions))
	if d := r.Diff; d != nil {
		fmt.Fprintf(w, "  since %s: %d components changed, %d licence changes, %d new and %d resolved vulnerabilities\n",
			d.Against.Version, len(d.Components), len(d.Licences), len(d.NewCVEs), len(d.Resolved))
	}
}

// reviewRelease verifies the release completely (as verify does), reads the
// SBOMs the lock lists through the verified graph, and builds the review.
func (g *command) reviewRelease(ctx context.Context, in *releaseInput, lp *review.LicencePolicy, rp *gate.Policy, gatePath string, now time.Time, profile review.Profile) (*reviewed, *release.Lock, error) {
	prep, err := in.lock.Verify(ctx, in.src)
	if err != nil {
		return nil, nil, err
	}
	sboms, err := review.ReadSBOMs(ctx, prep.Lock, prep)
	if err != nil {
		return nil, nil, err
	}
	var gate *gate.Result
	if gatePath != "" {
		if gate, err = readGate(gatePath); err != nil {
			return nil, nil, cli.Usage(err)
		}
	}
	// Named as the user gave it: an archive is unpacked into a temporary
	// directory, which means nothing to whoever reads the review.
	id := review.Identity{
		Signer:     describeTrust(in.policy.Summary()),
		LockDigest: prep.LockResult.Digest,
		TimeSource: prep.LockResult.TimeSource,
		Verification: fmt.Sprintf("lock signature and all %d signed artifacts verified offline from %s; SBOMs checked against the signed lock's digests",
			len(prep.Verification.Subjects), in.given),
	}
	out := &reviewed{}
	prov := map[string]provenance.Summary{}
	statements := map[string][]byte{}
	for _, s := range prep.Verification.Subjects {
		if s.Provenance != nil {
			prov[s.Digest] = *s.Provenance
		}
		for _, st := range s.Statements {
			if st.PredicateType == review.PredicateType {
				statements[s.Digest] = st.Data
			}
		}
	}
	indexes := prep.Lock.Find(release.KindImageIndex, "")
	for _, ix := range indexes {
		out.signed = append(out.signed, signedStatement{index: ix, statement: statements[ix.Digest]})
	}
	signedAll := len(statements) > 0 && len(statements) == len(indexes)
	out.input = review.Input{Lock: prep.Lock, Identity: id, SBOMs: sboms, Gate: gate, ReleasePolicy: rp, Licences: lp, Profile: profile, Now: now, Provenance: prov, Signed: signedAll}
	if out.Review, err = review.Build(out.input); err != nil {
		return nil, nil, err
	}
	return out, prep.Lock, nil
}

func readGate(path string) (*gate.Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the gate report: %w", err)
	}
	r, err := review.ParseGateReport(data)
	if err != nil {
		return nil, fmt.Errorf("gate report %s: %w", path, err)
	}
	return r, nil
}

// openAgainst opens the release to compare with: an archive when the path
// exists, otherwise a lock in a registry. It is verified against the same
// trust policy as the release under review.
func (g *command) openAgainst(ctx context.Context, cl *registry.Client, ref string, cur *releaseInput) (*releaseInput, error) {
	// The release compared with is another version: it is held to the tag
	// it was fetched by, not to --expect-version.
	_, statErr := os.Stat(ref)
	tag := ""
	if statErr != nil {
		tag = mirror.LockTag(ref)
	}
	v, err := cur.verifierFor(tag)
	if err != nil {
		return nil, err
	}
	p := cur.policy
	p.Expect = trust.Binding{Tag: tag}
	in := &releaseInput{policy: p, verifier: v, close: func() {}, given: "lock " + ref, vs: cur.vs, advisories: cur.advisories}
	if statErr == nil {
		in.given = "archive " + ref
		a, err := mirror.OpenArchive(ctx, []string{ref}, g.workDir, g.limits.limits())
		if err != nil {
			return nil, fmt.Errorf("opening --against %s: %w", ref, err)
		}
		in.archive, in.src, in.lockJSON, in.lockBundle = a, a.Layout, a.LockJSON, a.LockBundle
		in.close = func() { _ = a.Close() }
		if in.lock, err = mirror.VerifyLock(in.lockJSON, in.lockBundle, v); err != nil {
			in.close()
			return nil, fmt.Errorf("--against %s: %w", ref, err)
		}
		return in, nil
	}
	lockJSON, bundle, err := mirror.FetchLock(ctx, cl, ref)
	if err != nil {
		return nil, fmt.Errorf("fetching --against %s: %w", ref, err)
	}
	in.lockJSON, in.lockBundle = lockJSON, bundle
	in.src = &mirror.RegistrySource{Client: cl, Name: "source registries"}
	if in.lock, err = mirror.VerifyLock(lockJSON, bundle, v); err != nil {
		return nil, fmt.Errorf("--against %s: %w", ref, err)
	}
	return in, nil
}
