package gate

import (
	"bytes"
	_ "embed"
	"fmt"
)

// defaultPolicy is the release policy the gate applies when none is given.
// It ships inside the binary so that reloader-release gate, local and
// publish run from any directory, with no source tree at hand.
//
//go:embed release-policy.yaml
var defaultPolicy []byte

// DefaultPolicyYAML returns the release policy built into the binary, as
// written (with its comments), for a user to start their own from.
func DefaultPolicyYAML() []byte { return bytes.Clone(defaultPolicy) }

// LoadPolicy reads the policy file at path; "" is the built-in policy.
func LoadPolicy(path string) (*Policy, error) {
	if path != "" {
		return ReadPolicy(path)
	}
	p, err := ParsePolicy(defaultPolicy)
	if err != nil {
		return nil, fmt.Errorf("the built-in release policy: %w", err)
	}
	return p, nil
}
