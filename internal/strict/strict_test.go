package strict

import (
	"strings"
	"testing"
)

type doc struct {
	Name    string `json:"name"`
	Expires string `json:"expires"`
}

// Every way a hand-written or handed-over document can be wrong is an error
// naming the document; a right one decodes.
func TestStrictDecoding(t *testing.T) {
	cases := []struct {
		name, in string
		yaml     bool
		want     string // "" for success
	}{
		{"json", `{"name":"a","expires":"2027-01-01"}`, false, ""},
		{"yaml", "name: a\nexpires: \"2027-01-01\"\n", true, ""},
		{"misspelt field", `{"name":"a","expire":"2027-01-01"}`, false, `unknown field "expire"`},
		{"misspelt field in yaml", "name: a\nexpire: x\n", true, `unknown field "expire"`},
		{"trailing data", `{"name":"a"}{}`, false, "trailing data"},
		{"empty", " \n", false, "decoding policy: EOF"},
		{"too large", `{"name":"` + strings.Repeat("x", 64) + `"}`, false, "larger than 32 bytes"},
		{"not yaml", "name: [", true, "decoding policy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d doc
			decode := decoderFor(c.yaml)
			limit := 1 << 10
			if c.name == "too large" {
				limit = 32
			}
			err := decode([]byte(c.in), "policy", limit, &d)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}

func FuzzYAML(f *testing.F) {
	f.Add([]byte("name: a\n"))
	f.Add([]byte(`{"name":"a"}`))
	f.Add([]byte("name: a\nname: b\n"))
	f.Add([]byte(`{"name":"a","name":"b"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var d doc
		_ = YAML(data, "document", 1<<16, &d)
	})
}
