// Package security holds the project's security contact and coordinated
// vulnerability disclosure policy as the release configuration declares
// them (release/security.yaml), once: the release publishes them as a
// security.txt (RFC 9116) and every SBOM names the producer's contact from
// them (BSI TR-03183-2 v2.1.0 §5.2.1 and §5.2.2). Nothing here is derived
// or guessed: a contact is what the project says it answers at.
package security

import (
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/reloader-dev/reloader/internal/strict"
)

// APIVersion identifies the file format.
const APIVersion = "reloader.dev/security/v1"

// FileName is the name the release publishes the security.txt under,
// next to the versions page (RFC 9116 §3: /.well-known/security.txt where
// a web site serves it).
const FileName = "security.txt"

const maxFileBytes = 64 << 10

// maxExpiry is how far ahead a security.txt may expire: RFC 9116 §2.5.5
// recommends less than a year, so a stale file stops being believed.
const maxExpiry = 365 * 24 * time.Hour

// Config is release/security.yaml.
type Config struct {
	APIVersion string `json:"apiVersion"`
	// Producer is the organisation that makes the release, the SBOMs'
	// author and the creator of the project's own components.
	Producer string `json:"producer"`
	// Contact is where vulnerabilities are reported: an https URL or an
	// email address (written as mailto: in security.txt).
	Contact string `json:"contact"`
	// Policy is the URL of the coordinated disclosure policy (SECURITY.md).
	Policy string `json:"policy"`
	// PreferredLanguages are the languages reports may be written in
	// (RFC 5646 tags).
	PreferredLanguages []string `json:"preferredLanguages"`
	// Canonical is the URL the security.txt is published at.
	Canonical string `json:"canonical"`
}

// Read reads and checks the configuration at path.
func Read(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the security configuration: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("security configuration %s: %w", path, err)
	}
	return c, nil
}

// Parse decodes the configuration strictly and checks every field.
func Parse(data []byte) (*Config, error) {
	var c Config
	if err := strict.YAML(data, "security configuration", maxFileBytes, &c); err != nil {
		return nil, err
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Check holds the configuration to what security.txt and the SBOMs need.
func (c *Config) Check() error {
	var errs []error
	if c.APIVersion != APIVersion {
		errs = append(errs, fmt.Errorf("apiVersion is %q, want %q", c.APIVersion, APIVersion))
	}
	if strings.TrimSpace(c.Producer) == "" || hasControl(c.Producer) {
		errs = append(errs, errors.New("producer: a name is required, on one line"))
	}
	if _, _, err := c.contact(); err != nil {
		errs = append(errs, err)
	}
	for name, u := range map[string]string{"policy": c.Policy, "canonical": c.Canonical} {
		if err := httpsURL(u); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	if len(c.PreferredLanguages) == 0 {
		errs = append(errs, errors.New("preferredLanguages: name at least one language"))
	}
	for _, l := range c.PreferredLanguages {
		if !languageTag(l) {
			errs = append(errs, fmt.Errorf("preferredLanguages: %q is not a language tag", l))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid security configuration: %w", errors.Join(errs...))
	}
	return nil
}

// ContactURL is the contact as a URL, or "" when it is an email address.
func (c *Config) ContactURL() string {
	u, _, _ := c.contact()
	return u
}

// ContactEmail is the contact as an email address, or "" when it is a URL.
func (c *Config) ContactEmail() string {
	_, e, _ := c.contact()
	return e
}

// contact splits the contact into a URL or an email address.
func (c *Config) contact() (link, email string, err error) {
	s := strings.TrimSpace(c.Contact)
	if rest, ok := strings.CutPrefix(s, "mailto:"); ok {
		s = rest
	}
	if strings.HasPrefix(s, "https://") {
		if err := httpsURL(s); err != nil {
			return "", "", fmt.Errorf("contact: %w", err)
		}
		return s, "", nil
	}
	a, perr := mail.ParseAddress(s)
	if perr != nil || a.Name != "" || a.Address != s {
		return "", "", fmt.Errorf("contact %q: want an https URL or a bare email address", c.Contact)
	}
	return "", s, nil
}

func httpsURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || hasControl(s) || strings.ContainsAny(s, " \t") {
		return fmt.Errorf("%q is not an https URL", s)
	}
	return nil
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// languageTag accepts the shape of an RFC 5646 tag (alphanumeric subtags
// joined by hyphens, the first alphabetic); a registry check would need
// the IANA list, which a release machine does not download.
func languageTag(s string) bool {
	parts := strings.Split(s, "-")
	for i, p := range parts {
		if len(p) == 0 || len(p) > 8 {
			return false
		}
		for _, r := range p {
			alpha := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
			if !alpha && (i == 0 || r < '0' || r > '9') {
				return false
			}
		}
	}
	return true
}

// Expires is when a release's security.txt stops being valid: the end of
// support of the release's series when that comes first, else a year less
// a day after the release (RFC 9116 recommends less than a year).
// endOfSupport is zero when the series is not in the support table.
func Expires(created, endOfSupport time.Time) time.Time {
	limit := created.UTC().Add(maxExpiry - 24*time.Hour)
	if !endOfSupport.IsZero() && endOfSupport.Before(limit) {
		return endOfSupport.UTC()
	}
	return limit
}

// Text is the security.txt (RFC 9116) of a release: the contact, the
// expiry, the disclosure policy, the preferred languages and where it is
// published, one field per line.
func (c *Config) Text(expires time.Time) []byte {
	contact := c.ContactURL()
	if contact == "" {
		contact = "mailto:" + c.ContactEmail()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Security contact of %s (RFC 9116), published with every release.\n", c.Producer)
	fmt.Fprintf(&b, "Contact: %s\n", contact)
	fmt.Fprintf(&b, "Expires: %s\n", expires.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "Policy: %s\n", c.Policy)
	fmt.Fprintf(&b, "Preferred-Languages: %s\n", strings.Join(c.PreferredLanguages, ", "))
	fmt.Fprintf(&b, "Canonical: %s\n", c.Canonical)
	return []byte(b.String())
}
