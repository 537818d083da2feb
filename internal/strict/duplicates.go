package strict

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// NoDuplicateKeys refuses JSON in which one object holds a key twice.
// encoding/json keeps the last value and other parsers the first, so a
// signed document with a repeated key could be read one way by the
// verifier and another by whoever acts on it. Malformed JSON is left for
// the decoder to report.
func NoDuplicateKeys(data []byte, what string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := walkValue(dec, "$", 0); err != nil {
		var dup duplicateKeyError
		if errors.As(err, &dup) {
			return fmt.Errorf("decoding %s: %w", what, dup)
		}
	}
	return nil
}

type duplicateKeyError struct{ key, at string }

func (e duplicateKeyError) Error() string {
	return fmt.Sprintf("key %q appears twice in the object at %s", e.key, e.at)
}

// maxDepth stops a deeply nested document from costing more than its
// size already allows; encoding/json refuses deeper nesting anyway.
const maxDepth = 10000

func walkValue(dec *json.Decoder, at string, depth int) error {
	if depth > maxDepth {
		return errors.New("nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			k, ok := kt.(string)
			if !ok {
				return errors.New("object key is not a string")
			}
			if seen[k] {
				return duplicateKeyError{key: k, at: at}
			}
			seen[k] = true
			if err := walkValue(dec, at+"."+k, depth+1); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		return err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := walkValue(dec, at+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		return err
	}
	return nil
}
