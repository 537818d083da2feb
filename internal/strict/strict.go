// Package strict decodes the files a person writes or a pipeline hands over
// (policies, support tables, advisories, locks, gate reports) so that a
// misspelt field is an error, not a silently ignored setting: a misspelt
// "expires" would otherwise make an exception last forever.
package strict

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// JSON decodes one JSON object of at most max bytes into v, refusing
// unknown fields, a key repeated in one object and trailing data. what names the document in errors
// ("release lock"). Whether an empty document is an error is the caller's
// to say: for some, an empty file is best refused by what it lacks.
func JSON(data []byte, what string, max int, v any) error {
	if err := check(data, what, max); err != nil {
		return err
	}
	if err := NoDuplicateKeys(data, what); err != nil {
		return err
	}
	return decode(data, what, v)
}

// YAML is JSON for a document written as YAML (or JSON).
func YAML(data []byte, what string, max int, v any) error {
	if err := check(data, what, max); err != nil {
		return err
	}
	// The strict conversion refuses a key repeated in one mapping, which
	// the lenient one would resolve silently to one of the two values.
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return fmt.Errorf("decoding %s: %w", what, err)
	}
	if err := NoDuplicateKeys(j, what); err != nil {
		return err
	}
	return decode(j, what, v)
}

func check(data []byte, what string, max int) error {
	if len(data) > max {
		return fmt.Errorf("%s is larger than %d bytes", what, max)
	}
	return nil
}

func decode(data []byte, what string, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decoding %s: %w", what, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("decoding %s: trailing data after the JSON object", what)
	}
	return nil
}
