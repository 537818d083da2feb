package security

import (
	"os"
	"strings"
	"testing"
	"time"
)

// The release configuration declares a contact SECURITY.md states, and the
// security.txt made from it carries every field RFC 9116 asks of ours.
func TestTheDeclaredContactIsTheOneSecurityMDStatesAndMakesAnRFC9116File(t *testing.T) {
	c, err := Read("../security.yaml")
	if err != nil {
		t.Fatal(err)
	}
	policy, err := os.ReadFile("../../SECURITY.md")
	if err != nil {
		t.Fatal(err)
	}
	// SECURITY.md sends reporters to GitHub's private reporting of this
	// repository: the contact is that form, the policy that file.
	if !strings.Contains(string(policy), `"Report a vulnerability"`) || !strings.HasSuffix(c.ContactURL(), "/security/advisories/new") {
		t.Errorf("contact %q is not the private reporting SECURITY.md names", c.Contact)
	}
	if !strings.HasSuffix(c.Policy, "/SECURITY.md") {
		t.Errorf("policy %q, want SECURITY.md", c.Policy)
	}
	created := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	eos := time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC)
	txt := string(c.Text(Expires(created, eos)))
	for _, want := range []string{
		"Contact: " + c.Contact + "\n", "Expires: 2027-06-01T00:00:00Z\n", "Policy: " + c.Policy + "\n",
		"Preferred-Languages: en\n", "Canonical: " + c.Canonical + "\n",
	} {
		if strings.Count(txt, want) != 1 {
			t.Errorf("security.txt lacks %q once:\n%s", want, txt)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(txt), "\n") {
		if !strings.HasPrefix(line, "#") && !strings.Contains(line, ": ") {
			t.Errorf("line %q is neither a comment nor a field", line)
		}
	}
}

// A security.txt never claims validity for a year or more, nor past the
// end of support of the release's series.
func TestExpiresIsTheEndOfSupportOrLessThanAYear(t *testing.T) {
	created := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if got := Expires(created, time.Time{}); !got.Before(created.AddDate(1, 0, 0)) || got.Before(created.AddDate(0, 11, 0)) {
		t.Errorf("no series: expires %s, want just under a year after %s", got, created)
	}
	if got := Expires(created, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)); !got.Before(created.AddDate(1, 0, 0)) {
		t.Errorf("support to 2030: expires %s, want under a year", got)
	}
	eos := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
	if got := Expires(created, eos); !got.Equal(eos) {
		t.Errorf("support to %s: expires %s", eos, got)
	}
}

// A contact that is neither an https URL nor a bare address, a policy
// over http and a missing language are refused by name.
func TestAnInvalidConfigurationIsRefusedNamingTheField(t *testing.T) {
	base := "apiVersion: reloader.dev/security/v1\nproducer: P\npolicy: https://x.example/SECURITY.md\ncanonical: https://x.example/security.txt\npreferredLanguages: [en]\n"
	for name, tc := range map[string]struct{ doc, want string }{
		"email contact":       {base + "contact: security@example.com\n", ""},
		"mailto contact":      {base + "contact: mailto:security@example.com\n", ""},
		"http contact":        {base + "contact: http://x.example/report\n", "contact"},
		"named address":       {base + "contact: Sec <security@example.com>\n", "contact"},
		"no contact":          {base, "contact"},
		"http policy":         {strings.Replace(base, "https://x.example/SECURITY.md", "http://x.example/SECURITY.md", 1) + "contact: security@example.com\n", "policy"},
		"no language":         {strings.Replace(base, "[en]", "[]", 1) + "contact: security@example.com\n", "preferredLanguages"},
		"bad language":        {strings.Replace(base, "[en]", "[\"e n\"]", 1) + "contact: security@example.com\n", "preferredLanguages"},
		"unknown field":       {base + "contact: security@example.com\nencryption: x\n", "encryption"},
		"multi-line producer": {strings.Replace(base, "producer: P", "producer: \"P\\nQ\"", 1) + "contact: security@example.com\n", "producer"},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := Parse([]byte(tc.doc))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
				if c.ContactEmail() != "security@example.com" || !strings.Contains(string(c.Text(time.Now())), "Contact: mailto:security@example.com\n") {
					t.Errorf("email contact %q: %s", c.ContactEmail(), c.Text(time.Now()))
				}
			case err == nil || !strings.Contains(err.Error(), tc.want):
				t.Errorf("error %v, want one naming %s", err, tc.want)
			}
		})
	}
}

// Parse reads a file of the release configuration: whatever it holds, it
// is an error or a configuration that passes Check, never a crash.
func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile("../security.yaml"); err == nil {
		f.Add(data)
	}
	f.Add([]byte("contact: [1]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		if err := c.Check(); err != nil {
			t.Fatalf("parsed but fails Check: %v", err)
		}
		if txt := c.Text(time.Unix(0, 0)); strings.Count(string(txt), "\nContact: ") != 1 {
			t.Fatalf("security.txt with %d contacts:\n%s", strings.Count(string(txt), "\nContact: "), txt)
		}
	})
}
