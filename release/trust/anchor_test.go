package trust_test

import (
	"regexp"
	"testing"

	"github.com/reloader-dev/reloader/release/trust"
)

func TestAnIdentityRegexpMatchesWholeIdentitiesOnly(t *testing.T) {
	const expr = `https://github\.com/reloader-dev/reloader/\.github/workflows/release\.yml@refs/tags/v.*`
	re := regexp.MustCompile(trust.AnchorRegexp(expr))
	for id, want := range map[string]bool{
		"https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.3.0":                                               true,
		"https://github.com/evil/x/.github/workflows/a.yml@https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1": false,
		"https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.3.0\nextra":                                        false,
	} {
		if got := re.MatchString(id); got != want {
			t.Errorf("anchored %q matching %q = %v, want %v", expr, id, got, want)
		}
	}
	// An alternation stays whole: ^(?:a|b)$, not ^a|b$.
	if re := regexp.MustCompile(trust.AnchorRegexp("a|b")); re.MatchString("xb") || !re.MatchString("b") {
		t.Error("an anchored alternation matched a part of the identity")
	}
	if trust.AnchorRegexp("") != "" {
		t.Error("an empty pattern must stay empty, so an unset regexp stays unset")
	}
}
