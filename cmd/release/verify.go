package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
	"github.com/reloader-dev/reloader/release/verify"
)

type verifyFlags struct {
	lock, bundle  string
	trust         cli.TrustFlags
	expectVersion string
	output        cli.Output
	scan          cli.ScanPolicyFlags
}

func newVerifyCmd() *cobra.Command { return newVerifyCmdWith(&verifyFlags{}) }

// newVerifyCmdWith is the command filling f, which a test may preset with
// what no flag of reloader-release sets (a test CA's missing SCTs).
func newVerifyCmdWith(f *verifyFlags) *cobra.Command {
	c := &cobra.Command{
		Use:   "verify",
		Short: "Verify a release lock and every artifact it lists, offline",
		Long: `verify checks the release lock's signature against the signer you expect
(a public key, or a keyless certificate identity and OIDC issuer with a
Sigstore trusted root), then every artifact of the lock in its registry by
digest: manifest and blob digests, sizes, media types, cosign signatures and
SBOM attestations. Keyless signatures need a transparency-log entry (verified
offline against the trusted root) unless the trusted root lists a timestamp
authority and no log, whose signed RFC 3161 timestamp is then the time
source, or --insecure-ignore-tlog is given. No transparency log or other
online service is contacted;
only the registry holding the artifacts.
(--trusted-root-sha256 and --insecure-ignore-sct, for archives that carry a
trusted root and for private CAs, are reloader-mirror's.)

A signature only says the signer made that lock at some time: with
--expect-version the lock must be exactly that version (after its signature
verified), so an older signed lock handed over under a newer name exits 3
naming both versions. --certificate-identity-regexp is anchored: it must
match the whole identity. A keyless certificate that carries GitHub's source
repository digest and ref must name the lock's commit and refs/tags/<version>.
` + cli.ScanPolicyHelp + `
verify -o json reports the scan check as "scanCheck", and what the lock's
signature established as "lock", as reloader-mirror verify -o json does:
lock.timeSource is what a keyless certificate's validity was judged at,
"rfc3161-timestamp" (a timestamp authority's signed timestamp),
"tlog-integrated-time" (a Rekor v1 entry) or both joined by "+"; a key
needs no time source, and lock.timeSource is then absent.` + cli.ExitCodesHelp,
		Example: `  # key-based release (private PKI)
  reloader-release verify --lock reloader-release.json --key cosign.pub --expect-version v1.2.3

  # during a key rotation: the new key, and the old one through 31 January 2027
  reloader-release verify --lock reloader-release.json --key new.pub --key old.pub,not-after=2027-01-31

  # keyless release from GitHub Actions
  reloader-release verify --lock reloader-release.json --trusted-root trusted_root.json \
    --certificate-identity https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3 \
    --certificate-oidc-issuer https://token.actions.githubusercontent.com

  # your own scan policy: a database at most a week old, no HIGH or CRITICAL at all
  reloader-release verify --lock reloader-release.json --key cosign.pub \
    --max-scan-age 7d --fail-on-severity HIGH,CRITICAL -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runVerify(cmd, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.lock, "lock", release.LockFileName, "the release lock")
	fl.StringVar(&f.bundle, "bundle", "", "the lock's Sigstore bundle (default <lock>.sigstore.json)")
	f.trust.AddFlags(fl)
	fl.StringVar(&f.expectVersion, "expect-version", "", "refuse the release unless its signed lock is exactly this version, e.g. v1.2.3 (exit 3)")
	f.output.AddFlags(c.Flags())
	f.scan.Register(c)
	return c
}

func (f *verifyFlags) options() (verify.Options, error) {
	var o verify.Options
	// The flags' own values are checked before any file is read, so a
	// mistyped flag is named as such whatever else is wrong.
	sp, err := f.scan.Policy(time.Time{})
	if err != nil {
		return o, err
	}
	o.Scan = sp
	p, err := f.trust.Policy()
	if err != nil {
		return o, err
	}
	o.Policy = &p
	o.ExpectVersion = f.expectVersion
	return o, nil
}

func runVerify(cmd *cobra.Command, f *verifyFlags) error {
	if err := f.output.Check(); err != nil {
		return err
	}
	opts, err := f.options()
	if err != nil {
		return err
	}
	if f.bundle == "" {
		f.bundle = f.lock + ".sigstore.json"
	}
	lockBytes, err := os.ReadFile(f.lock)
	if err != nil {
		return cli.Usage(err)
	}
	bundle, err := os.ReadFile(f.bundle)
	if err != nil {
		return cli.Usage(err)
	}
	l, lr, err := verify.SignedLock(cmd.Context(), lockBytes, bundle, opts)
	if err != nil {
		return reportScanRefusal(cmd, f, err)
	}
	scan, _ := opts.Scan.Check(l) // passed inside verify.Lock; this is its report
	if !f.output.JSON() {
		cli.WriteScanWarnings(cmd.ErrOrStderr(), &scan)
	}
	res, err := verify.Artifacts(cmd.Context(), l, opts)
	if f.output.JSON() {
		out := map[string]any{"version": l.Version, "verified": err == nil, "checked": res.Checked, "scanCheck": scan, "signerKeySha256": signerKey(l), "lock": lr}
		if err != nil {
			out["error"] = err.Error()
		}
		if werr := cli.WriteJSON(cmd.OutOrStdout(), out); werr != nil {
			return werr
		}
	} else {
		for _, line := range res.Checked {
			fmt.Fprintln(cmd.OutOrStdout(), line)
		}
	}
	if err != nil {
		return err
	}
	if !f.output.JSON() {
		fmt.Fprintf(cmd.OutOrStdout(), "release %s: all %d artifacts verified\n", l.Version, len(res.Checked))
		if fp := signerKey(l); fp != "" {
			fmt.Fprintf(cmd.OutOrStdout(), "signed by key sha256:%s\n", fp)
		}
	}
	return nil
}

// signerKey is the fingerprint of the key that verified a key-signed
// release: the verified lock names it, and verification held it to the
// policy's keys, so with several keys (a rotation) the user sees which.
func signerKey(l *release.Lock) string {
	if l.Signer.PublicKey == "" {
		return ""
	}
	k, err := trust.ParsePublicKey([]byte(l.Signer.PublicKey))
	if err != nil {
		return ""
	}
	return trust.KeyFingerprint(k)
}
