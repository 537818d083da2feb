package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/reloader-dev/reloader/release/trust"
)

// TrustFlags say whom to trust. Both CLIs declare them here and build their
// policy with Policy, so that a flag means the same in both (the
// transparency-log setting once diverged between two builders).
type TrustFlags struct {
	// Keys are the --key values: PATH, or PATH,not-after=DATE for a key
	// being rotated out (see ParseKeySpec).
	Keys                             []string
	Identity, IdentityRegexp, Issuer string
	TrustedRoot                      string
	// TrustedRootSHA256 and IgnoreSCT are reloader-mirror's alone (see
	// AddMirrorFlags).
	TrustedRootSHA256 string
	IgnoreTlog        bool
	IgnoreSCT         bool
	// AllowUnbound is reloader-mirror's --allow-unbound-certificate
	// (trust.Policy.AllowUnboundCertificate).
	AllowUnbound bool
	// ExpectBuilder is --expect-builder (trust.Policy.ExpectBuilder).
	ExpectBuilder string
}

// AddFlags adds the flags both CLIs take.
func (f *TrustFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.Keys, "key", nil, "PEM public key that must have signed the release (cosign.pub); repeat it to accept several keys during a rotation, "+
		"and give a key being rotated out its window as PATH,not-after=DATE (DATE: 2027-01-31, accepted through that day UTC, or RFC 3339), e.g. --key new.pub --key old.pub,not-after=2027-01-31")
	fs.StringVar(&f.Identity, "certificate-identity", "", "keyless: exact certificate identity (SAN) that must have signed")
	fs.StringVar(&f.IdentityRegexp, "certificate-identity-regexp", "", "keyless: regular expression the whole certificate identity must match (anchored: ^(?:EXPR)$)")
	fs.StringVar(&f.Issuer, "certificate-oidc-issuer", "", "keyless: OIDC issuer of the signing certificate")
	fs.StringVar(&f.TrustedRoot, "trusted-root", "", "keyless: Sigstore trusted_root.json to verify certificates against")
	fs.StringVar(&f.ExpectBuilder, "expect-builder", "", "builder id every image's SLSA provenance must name (default: keyless, the signer's certificate identity, i.e. the release workflow whose signing job wrote it; key-signed, \"reloader-release local\")")
	fs.BoolVar(&f.IgnoreTlog, "insecure-ignore-tlog", false, "keyless: accept signatures without a transparency log entry (by default each needs one; a private Sigstore without Rekor only)")
}

// AddMirrorFlags adds the flags only reloader-mirror takes: it reads
// archives that carry a trusted root, and it is run against private CAs;
// reloader-release verifies releases signed by public Sigstore.
func (f *TrustFlags) AddMirrorFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.TrustedRootSHA256, "trusted-root-sha256", "", "keyless: use the archive's trusted_root.json only if its sha256 is this (hex, as the release notes publish it)")
	fs.BoolVar(&f.IgnoreSCT, "insecure-ignore-sct", false, "keyless: accept certificates without a certificate transparency timestamp (private CAs that log to no CT log only)")
	fs.BoolVar(&f.AllowUnbound, "allow-unbound-certificate", false, "keyless: accept a lock certificate without GitHub's source repository extensions (URI, digest, ref), which bind it to the code that ran; recorded as a warning (private CAs that issue none only)")
}

// Given reports whether any signer was named.
func (f *TrustFlags) Given() bool {
	return len(f.Keys) > 0 || f.Identity != "" || f.IdentityRegexp != ""
}

// Policy is the policy the flags ask for; every error is a usage error.
func (f *TrustFlags) Policy() (trust.Policy, error) { return f.PolicyCarrying(nil, "") }

// PolicyCarrying is Policy with a trusted root carried with the release
// (an archive's), used only when --trusted-root is not given, and then only
// if --trusted-root-sha256 vouches for it (trust.LoadPolicy checks).
func (f *TrustFlags) PolicyCarrying(rootJSON []byte, source string) (trust.Policy, error) {
	switch {
	case !f.Given():
		return trust.Policy{}, Usage(errors.New("say whom to trust: --key, or --certificate-identity(-regexp) with --certificate-oidc-issuer"))
	case len(f.Keys) > 0 && (f.Identity != "" || f.IdentityRegexp != ""):
		return trust.Policy{}, Usage(errors.New("give either --key or a certificate identity, not both"))
	}
	keys, err := f.KeyFiles()
	if err != nil {
		return trust.Policy{}, err
	}
	pf := trust.PolicyFiles{KeyFiles: keys, Identity: f.Identity, IdentityRegexp: f.IdentityRegexp, Issuer: f.Issuer,
		TrustedRootFile: f.TrustedRoot, TrustedRootSHA256: f.TrustedRootSHA256, IgnoreSCT: f.IgnoreSCT, IgnoreTlog: f.IgnoreTlog}
	if f.TrustedRoot == "" {
		pf.TrustedRootJSON, pf.TrustedRootSource = rootJSON, source
	}
	p, err := trust.LoadPolicy(pf)
	if err != nil {
		return trust.Policy{}, Usage(err)
	}
	p.ExpectBuilder = f.ExpectBuilder
	p.AllowUnboundCertificate = f.AllowUnbound
	return p, nil
}

// KeyFiles are the --key values parsed.
func (f *TrustFlags) KeyFiles() ([]trust.KeyFile, error) {
	var out []trust.KeyFile
	for _, spec := range f.Keys {
		k, err := ParseKeySpec(spec)
		if err != nil {
			return nil, Usage(fmt.Errorf("--key %q: %w", spec, err))
		}
		out = append(out, k)
	}
	return out, nil
}

// ParseKeySpec reads a --key value: PATH, or PATH,not-after=DATE where
// DATE is a day (the key is accepted through its end, UTC) or an RFC 3339
// instant. A path with a comma cannot be given; nobody names a key so.
func ParseKeySpec(spec string) (trust.KeyFile, error) {
	path, attrs, _ := strings.Cut(spec, ",")
	if path == "" {
		return trust.KeyFile{}, errors.New("no key file")
	}
	k := trust.KeyFile{Path: path}
	if attrs == "" {
		return k, nil
	}
	name, value, ok := strings.Cut(attrs, "=")
	if !ok || name != "not-after" || value == "" {
		return trust.KeyFile{}, fmt.Errorf("want PATH or PATH,not-after=DATE, not %q after the path", attrs)
	}
	if t, err := time.Parse(time.DateOnly, value); err == nil {
		k.NotAfter = t.Add(24*time.Hour - time.Nanosecond)
		return k, nil
	}
	t, err := time.Parse(time.RFC3339, value)
	if err != nil {
		return trust.KeyFile{}, fmt.Errorf("not-after=%s: want a date (2027-01-31) or an RFC 3339 time (2027-01-31T12:00:00Z)", value)
	}
	k.NotAfter = t
	return k, nil
}
