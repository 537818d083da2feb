package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/release/trust"
)

// The main package a rebuild takes from the provenance is refused, as
// untrusted, unless it is a clean ./-relative package path: it reaches go
// build's argv, where a flag would run code.
func TestAMainPackageThatIsNotACleanRelativePathIsRefused(t *testing.T) {
	for _, p := range []string{"./cmd/reloader", "./publish/releasetest/internal/smallapp", "./cmd/a_b-c.d"} {
		if err := CheckMainPackage(p); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
	for p, why := range map[string]string{
		"":                    "empty",
		"-toolexec=/bin/sh":   "flag",
		"./cmd/-toolexec=x":   "starting with -",
		"/etc/x":              "absolute",
		"cmd/reloader":        "./",
		"./":                  "./",
		"./../outside":        "..",
		"./cmd/../../outside": "..",
		"./cmd//x":            "empty path segment",
		"./cmd/x y":           "characters outside",
		"./cmd/x;rm":          "characters outside",
		"./cmd/$(id)":         "characters outside",
		"./cmd/reloader\n-a":  "characters outside",
		"./cmd/ünïcode":       "characters outside",
		"./cmd/.":             ". or ..",
		"github.com/evil/pkg": "./",
	} {
		err := CheckMainPackage(p)
		if err == nil || !errors.Is(err, trust.ErrUntrusted) || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "main package") {
			t.Errorf("%q: %v, want an untrusted error saying %q", p, err, why)
		}
	}
}

// FuzzCheckMainPackage: whatever the provenance says, an accepted main
// package never starts with '-', never leaves the module and uses only the
// allowed characters.
func FuzzCheckMainPackage(f *testing.F) {
	for _, s := range []string{"./cmd/reloader", "-toolexec=x", "./..", "./a/-b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if CheckMainPackage(p) != nil {
			return
		}
		if !strings.HasPrefix(p, "./") || strings.Contains(p, "..") && strings.Contains("/"+p+"/", "/../") || strings.Contains(p, "/-") {
			t.Fatalf("accepted %q", p)
		}
		if strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/") != "" {
			t.Fatalf("accepted %q with other characters", p)
		}
	})
}
