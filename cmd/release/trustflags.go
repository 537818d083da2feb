package main

import (
	"github.com/spf13/pflag"
)

// registerTrust adds the flags saying whom to trust, shared by verify and
// rebuild so that both check a release against the same policy.
func (f *verifyFlags) registerTrust(fl *pflag.FlagSet) {
	fl.StringVar(&f.key, "key", "", "expected signer's public key (PEM)")
	fl.StringVar(&f.identity, "certificate-identity", "", "expected keyless certificate identity")
	fl.StringVar(&f.identityRegexp, "certificate-identity-regexp", "", "expected keyless certificate identity, as a regular expression matching the whole identity (anchored: ^(?:EXPR)$)")
	fl.StringVar(&f.issuer, "certificate-oidc-issuer", "", "expected OIDC issuer of the keyless certificate")
	fl.StringVar(&f.trustedRoot, "trusted-root", "", "Sigstore trusted_root.json for keyless verification")
	fl.BoolVar(&f.ignoreTlog, "insecure-ignore-tlog", false, "keyless: accept signatures without a transparency-log entry (by default each needs one)")
}
