package strict

import (
	"strings"
	"testing"
)

// A signed or policy document with a key twice in one object is refused,
// with an error naming the key and where it is, in JSON and in YAML: two
// parsers must never read one signed document differently.
func TestADuplicateKeyIsRefusedNamingIt(t *testing.T) {
	cases := []struct {
		name, in string
		yaml     bool
		want     string
	}{
		{"json top level", `{"name":"a","expires":"2027-01-01","expires":"2099-01-01"}`, false, `key "expires" appears twice in the object at $`},
		{"json nested", `{"name":"a","x":[{"k":1,"k":2}]}`, false, `key "k" appears twice in the object at $.x[0]`},
		{"yaml top level", "name: a\nexpires: \"2027-01-01\"\nexpires: \"2099-01-01\"\n", true, `"expires"`},
		{"json written as yaml", `{"name":"a","name":"b"}`, true, `"name"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d doc
			decode := decoderFor(c.yaml)
			err := decode([]byte(c.in), "release lock", 1<<10, &d)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "release lock") {
				t.Fatalf("error %v, want one naming the release lock and saying %q", err, c.want)
			}
		})
	}
	// The same key in two different objects is not a duplicate.
	var v struct {
		A map[string]int `json:"a"`
		B map[string]int `json:"b"`
	}
	if err := JSON([]byte(`{"a":{"k":1},"b":{"k":2}}`), "lock", 1<<10, &v); err != nil {
		t.Fatalf("same key in sibling objects: %v", err)
	}
}

// FuzzNoDuplicateKeys: whatever the bytes, the check never panics, and a
// document it accepts that encoding/json also accepts decodes the same
// whichever occurrence of a key a parser would keep (there is only one).
func FuzzNoDuplicateKeys(f *testing.F) {
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Add([]byte(`{"a":{"b":[{"c":1},{"c":2}]}}`))
	f.Add([]byte(`[[[[{"x":1}]]]]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		err := NoDuplicateKeys(data, "document")
		if err != nil && !strings.Contains(err.Error(), "appears twice") {
			t.Fatalf("unexpected error %v", err)
		}
	})
}

// decoderFor is YAML for a document written as YAML, else JSON.
func decoderFor(yaml bool) func([]byte, string, int, any) error {
	if yaml {
		return YAML
	}
	return JSON
}
