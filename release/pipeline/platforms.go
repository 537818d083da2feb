package pipeline

import (
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
