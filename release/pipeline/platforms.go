package pipeline

import (
	"fmt"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Variant names.
const (
	VariantStandard = "standard"
	VariantUBI      = "ubi"
)

// StandardPlatforms is what the standard (scratch) variant ships for.
func StandardPlatforms() []v1.Platform {
	return []v1.Platform{
		{OS: "linux", Architecture: "amd64"},
		{OS: "linux", Architecture: "arm64"},
		{OS: "linux", Architecture: "arm", Variant: "v7"},
	}
}

// UBIPlatforms is what the UBI variant ships for (UBI has no 32-bit ARM).
func UBIPlatforms() []v1.Platform {
	return []v1.Platform{
		{OS: "linux", Architecture: "amd64"},
		{OS: "linux", Architecture: "arm64"},
	}
}

// ParsePlatforms reads "os/arch[/variant]" values, as --platforms gives them.
func ParsePlatforms(values []string) ([]v1.Platform, error) {
	var out []v1.Platform
	for _, s := range values {
		p, err := v1.ParsePlatform(s)
		if err != nil || p.OS == "" || p.Architecture == "" {
			return nil, fmt.Errorf("platform %q: want os/arch[/variant], e.g. linux/amd64", s)
		}
		if !slices.ContainsFunc(StandardPlatforms(), p.Equals) {
			return nil, fmt.Errorf("platform %q is not one Reloader ships (%s)", s, platformList(StandardPlatforms()))
		}
		out = append(out, *p)
	}
	return out, nil
}

// only keeps the platforms of all that are in want; nil want keeps all.
func only(all, want []v1.Platform) []v1.Platform {
	if want == nil {
		return all
	}
	var out []v1.Platform
	for _, p := range all {
		if slices.ContainsFunc(want, p.Equals) {
			out = append(out, p)
		}
	}
	return out
}

func platformList(ps []v1.Platform) string {
	var s []string
	for _, p := range ps {
		s = append(s, p.String())
	}
	return strings.Join(s, ", ")
}
