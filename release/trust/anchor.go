package trust

// AnchorRegexp makes an identity pattern match a whole certificate identity.
// cosign, sigstore-go, policy-controller and Kyverno all match a regexp
// anywhere in the subject, so "https://github.com/reloader-dev/reloader/"
// alone would accept any workflow on any branch of that repository, and of
// any repository whose URL contains it. Every place that hands a user's
// identity regexp to a verifier or writes it into a policy passes it through
// here, so the pattern means what it reads as.
func AnchorRegexp(expr string) string {
	if expr == "" {
		return ""
	}
	return "^(?:" + expr + ")$"
}
