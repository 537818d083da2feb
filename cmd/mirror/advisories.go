package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/mod/semver"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
)

// advisoryFlags choose what a release is judged against and the user's
// exceptions; every command that takes a release applies them.
type advisoryFlags struct {
	source           string
	accept           []string
	allowUnsupported bool
	// now is the clock end of support is judged by; tests set it.
	now func() time.Time
}

// advisoriesHelp is the rule, for the root command's help.
const advisoriesHelp = `

Every command that takes a release (plan, copy, import, export, verify,
values, policy, review) refuses, with exit 3, a release that a signed
advisory marks affected, or whose release series is past its end of
support or listed in no support table known, unless --accept-advisory ID /
--accept-unsupported is given. Of the support tables known (the source's,
the release's own lock's, and those of the releases given beside it), the
entry that ends the series first applies.
The advisories and support table come from a signed release lock, as they
stood when that release was cut, so a newer release tells you about older
ones: by default, for copy, import, plan and verify, the newest lock the
--target holds (verified with the same trust policy), or the release's own
lock if that is newer or there is no target; for the others the release's
own lock. --advisories names another source: a release archive, a lock in a
registry, or a directory of OSV files (with an optional support.yaml),
which is trusted as given, or of the signed CSAF 2.0 documents a release
publishes next to its versions page (csaf/), each of which must verify
against the trust policy. Withdrawn advisories are ignored.`

func (a *advisoryFlags) register(pf *pflag.FlagSet) {
	pf.StringVar(&a.source, "advisories", "", "judge the release by the advisories and support table of this release archive, lock reference or directory of OSV files (trusted as given) or signed CSAF files (verified; default: the newest signed lock at --target for copy, import, plan and verify, else the release's own)")
	pf.StringArrayVar(&a.accept, "accept-advisory", nil, "run a release despite this advisory (ID or alias; repeatable)")
	pf.BoolVar(&a.allowUnsupported, "accept-unsupported", false, "run a release whose series is past its end of support, or listed in no support table known (recorded as a warning)")
	// The flag's first name, kept so scripts written for it still run.
	pf.BoolVar(&a.allowUnsupported, "allow-unsupported", false, "")
	_ = pf.MarkDeprecated("allow-unsupported", "use --accept-unsupported")
}

// judge verifies where the advisories come from and decides on the
// release the lock describes; the standing is returned with its refusal.
func (g *command) judge(ctx context.Context, cl *registry.Client, in *releaseInput, l *release.Lock, atTarget bool) (*mirror.Standing, error) {
	src, err := g.advisorySource(ctx, cl, in, l, atTarget)
	if err != nil {
		return nil, err
	}
	o := g.adv.standingOptions()
	o.Tables = []mirror.NamedTable{{Name: "release " + l.Version + " (its own lock)", Table: l.Support}}
	st := mirror.Judge(src, l.Version, o)
	return st, st.Err()
}

// standingOptions are the accept flags, judged at the advisories' clock.
func (a *advisoryFlags) standingOptions() mirror.StandingOptions {
	now := time.Now
	if a.now != nil {
		now = a.now
	}
	return mirror.StandingOptions{Now: now(), Accept: a.accept, AllowUnsupported: a.allowUnsupported}
}

// advisorySource is --advisories, else the newest verified lock of those
// published beside the release's lock reference and, when atTarget (the
// command reads the target anyway), at the target, when it is newer than
// the release; else the release's own lock.
func (g *command) advisorySource(ctx context.Context, cl *registry.Client, in *releaseInput, own *release.Lock, atTarget bool) (*mirror.AdvisorySource, error) {
	fromLock := func(name, tag string, lockJSON, bundle []byte) (*mirror.AdvisorySource, error) {
		if src, ok := in.advisories[name]; ok {
			return src, nil
		}
		if bytes.Equal(lockJSON, in.lockJSON) && bytes.Equal(bundle, in.lockBundle) {
			// The release given, read again where it is published: its
			// lock verified when it was opened; only the tag is new.
			if err := (trust.Binding{Tag: tag}).Check(in.lock.Lock); err != nil {
				return nil, fmt.Errorf("the lock of the advisories (%s): %w", name, err)
			}
			return mirror.AdvisoriesFromLock(name, in.lock.Lock)
		}
		v, err := in.verifierFor(tag)
		if err != nil {
			return nil, err
		}
		l, _, err := v.Lock(lockJSON, bundle)
		if err != nil {
			return nil, fmt.Errorf("verifying the lock of the advisories (%s): %w", name, err)
		}
		src, err := mirror.AdvisoriesFromLock(name, l)
		if err == nil {
			in.advisories[name] = src
		}
		return src, err
	}
	if s := g.adv.source; s != "" {
		st, err := os.Stat(s)
		switch {
		case err == nil && st.IsDir() && !exists(filepath.Join(s, "oci-layout")):
			// CSAF documents in it must be signed by the release's signer.
			v, err := in.verifierFor("")
			if err != nil {
				return nil, err
			}
			return mirror.AdvisoriesFromSignedDir(s, func(what string, data, bundle []byte) error {
				return v.Document(own, what, data, bundle)
			})
		case err == nil:
			a, err := mirror.OpenArchive(ctx, []string{s}, g.workDir, g.limits.limits())
			if err != nil {
				return nil, fmt.Errorf("--advisories: %w", err)
			}
			defer func() { _ = a.Close() }()
			return fromLock("archive "+s, "", a.LockJSON, a.LockBundle)
		case strings.ContainsAny(s, ":@"):
			lj, lb, err := mirror.FetchLock(ctx, cl, s)
			if err != nil {
				return nil, fmt.Errorf("--advisories: %w", err)
			}
			return fromLock(s, mirror.LockTag(s), lj, lb)
		default:
			return nil, cli.Usage(fmt.Errorf("--advisories %q: not a directory, an archive or a lock reference", s))
		}
	}
	// The newest release published where the lock was fetched: the
	// connected side knows it even when the target does not yet.
	best, bestVersion := (*mirror.AdvisorySource)(nil), own.Version
	if repo := mirror.LockRepository(g.lockRef); g.lockRef != "" && repo != "" {
		src, err := newestBinding(ctx, cl, repo, own.Version, fromLock)
		if err != nil {
			return nil, err
		}
		if src != nil {
			best, bestVersion = src, src.Release
		}
	}
	// And the newest at the target, for the commands that read it.
	if atTarget && g.target != "" {
		repo := strings.TrimSuffix(g.target, "/") + "/" + release.LockRepository
		versions, err := mirror.ReleasesAt(ctx, cl, repo)
		if err != nil {
			return nil, err
		}
		if len(versions) > 0 && newer(versions[0], bestVersion) {
			ref := repo + ":" + versions[0]
			lj, lb, err := mirror.FetchLock(ctx, cl, ref)
			if err != nil {
				return nil, fmt.Errorf("reading the newest release at the target for its advisories: %w", err)
			}
			return fromLock("release "+versions[0]+" at "+ref, versions[0], lj, lb)
		}
	}
	if best != nil {
		return best, nil
	}
	return mirror.AdvisoriesFromLock("release "+own.Version+" (its own lock)", own)
}

// newestBinding is the advisories of the newest release tagged in repo
// after version whose signed lock is the release its tag names. A tag
// re-pointed to an older lock (a replay) is passed over: it says nothing
// the older lock did not, and the release being judged is bound to its own
// tag independently, so a replay beside it must not refuse it. Any other
// failure (a lock that does not verify, a registry error) is returned.
func newestBinding(ctx context.Context, cl *registry.Client, repo, version string,
	fromLock func(name, tag string, lockJSON, bundle []byte) (*mirror.AdvisorySource, error)) (*mirror.AdvisorySource, error) {
	versions, err := mirror.ReleasesAt(ctx, cl, repo)
	if err != nil {
		return nil, err
	}
	for _, v := range versions {
		if !newer(v, version) {
			return nil, nil
		}
		ref := repo + ":" + v
		lj, lb, err := mirror.FetchLock(ctx, cl, ref)
		if err != nil {
			return nil, fmt.Errorf("reading release %s, published beside the release, for its advisories: %w", ref, err)
		}
		src, err := fromLock("release "+v+" at "+ref, v, lj, lb)
		if errors.Is(err, trust.ErrNotAskedFor) {
			continue
		}
		return src, err
	}
	return nil, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return !errors.Is(err, os.ErrNotExist)
}

// standingRefused reports a refusal in verify's JSON output too.
func (g *command) standingRefused(cmd *cobra.Command, st *mirror.Standing) {
	if st != nil && g.out.JSON() && cmd.Name() == "verify" {
		_ = g.emit(struct {
			Standing *mirror.Standing `json:"standing"`
		}{st}, nil)
	}
}

// newer reports whether version a is after b (either may lack the "v").
func newer(a, b string) bool {
	v := func(s string) string { return "v" + strings.TrimPrefix(s, "v") }
	return semver.Compare(v(a), v(b)) > 0
}

// readsTarget are the commands that read the --target registry anyway, and
// so take the advisories of the newest release there by default; the
// others (values, policy, export, review) name a target without reaching it.
var readsTarget = map[string]bool{"copy": true, "import": true, "plan": true, "verify": true}

// applyStanding judges the opened release, whose lock verified when it
// was opened, before a command acts on it.
func (g *command) applyStanding(cmd *cobra.Command, cl *registry.Client, in *releaseInput) error {
	st, err := g.judge(cmd.Context(), cl, in, in.lock.Lock, readsTarget[cmd.Name()])
	if err != nil {
		g.standingRefused(cmd, st)
		return err
	}
	in.standing = st
	if cmd.Name() != "verify" { // verify describes the standing in its report
		warnAccepted(g.stderr, st)
	}
	return nil
}

// warnAccepted prints, for people, each refusal the user's accept flags
// turned into a warning; -o json and the receipt carry the standing itself.
func warnAccepted(w io.Writer, st *mirror.Standing) {
	for _, a := range st.Advisories {
		fmt.Fprintf(w, "warning: advisory %s affects %s, accepted by --accept-advisory\n", a.ID, st.Version)
	}
	if st.UnsupportedAllowed {
		fmt.Fprintf(w, "warning: series %s of %s is %s (support table of %s), accepted by --accept-unsupported\n", st.Series, st.Version, st.Support, st.SupportFrom)
	}
}

// verifyReport is verify's JSON: the verification result as before, with
// the release's standing beside it.
type verifyReport struct {
	*trust.Result
	Standing *mirror.Standing `json:"standing"`
}

func withStanding(r *trust.Result, st *mirror.Standing) verifyReport {
	return verifyReport{Result: r, Standing: st}
}

func describeStanding(w io.Writer, st *mirror.Standing) {
	if st == nil {
		return
	}
	fmt.Fprintf(w, "Advisories: from %s\n", st.Source.Name)
	for _, a := range st.Advisories {
		fmt.Fprintf(w, "  advisory %s affects %s, accepted by --accept-advisory\n", a.ID, st.Version)
	}
	switch st.Support {
	case "supported":
		fmt.Fprintf(w, "  series %s supported until %s (support table of %s)\n", st.Series, st.EndOfSupport, st.SupportFrom)
	case "ended":
		fmt.Fprintf(w, "  warning: series %s out of support since %s (support table of %s), accepted by --accept-unsupported\n", st.Series, st.EndOfSupport, st.SupportFrom)
	case "unlisted":
		fmt.Fprintf(w, "  warning: series %s listed in no support table known (%s), accepted by --accept-unsupported\n", st.Series, st.SupportFrom)
	default:
		fmt.Fprintf(w, "  support: %s\n", st.Support)
	}
}
