package app

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
)

// The original's flag value forms: its booleans given as strings and its
// selector lists.

func parseBoolFlag(name, v string, bad func(string, ...any)) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "false", "0", "f":
		return false
	case "true", "1", "t":
		return true
	}
	bad("--%s=%q: want true or false", name, v)
	return false
}

// parseSelectorList turns the original's selector list (key:value,
// key=value, key:* or key=* meaning "has the label") into a label selector.
func parseSelectorList(items []string) (labels.Selector, error) {
	parts := make([]string, 0, len(items))
	for _, it := range items {
		// stakater's chart renders --namespace-selector="<selector>", quotes
		// included, and its controller accepts that.
		it = strings.Trim(strings.TrimSpace(it), `"'`)
		if it == "" {
			continue
		}
		k, v, found := strings.Cut(it, ":")
		if !found {
			k, v, found = strings.Cut(it, "=")
		}
		switch {
		case !found:
			parts = append(parts, it) // already a selector term (e.g. "!key", "key in (a,b)")
		case v == "*":
			parts = append(parts, k)
		default:
			parts = append(parts, k+"="+v)
		}
	}
	sel, err := labels.Parse(strings.Join(parts, ","))
	if err != nil {
		return nil, fmt.Errorf("%q: %w", strings.Join(items, ","), err)
	}
	return sel, nil
}
