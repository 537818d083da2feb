package pipeline

import (
	"fmt"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/reloader-dev/reloader/release"
)

// Variant names (release.Variant*).
const (
	VariantStandard = release.VariantStandard
	VariantUBI      = release.VariantUBI
	VariantFIPS     = release.VariantFIPS
	VariantUBIFIPS  = release.VariantUBIFIPS
)

// FIPS variants: the controller built with GOFIPS140=DefaultGOFIPS140 and
// the image's environment setting FIPSGODEBUG, so a container runs in FIPS
// 140-only mode unless its pod spec says otherwise.
const (
	// DefaultGOFIPS140 is the toolchain's alias for the CMVP-certified
	// snapshot of the Go Cryptographic Module (v1.0.0-c2097c7c in Go
	// 1.26); the binary's build information records the version it named.
	DefaultGOFIPS140 = "certified"
	FIPSGODEBUG      = "GODEBUG=fips140=only"
	// FIPSSuffix turns a variant's image name into its FIPS variant's:
	// reloader-fips, reloader-ubi-fips.
	FIPSSuffix = "-fips"
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

// FIPSPlatforms is what the -fips variants ship for: the 64-bit platforms.
// FIPS 140 validation covers the operating environments the module's
// certificate lists, and regulated clusters run amd64 and arm64; 32-bit
// arm/v7 would cost another full compile of the ~430 packages that link
// crypto for a platform nobody who needs FIPS runs. UBI-fips ships for
// the UBI platforms among these.
func FIPSPlatforms() []v1.Platform {
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
