// Package buildinfo carries the version stamped into a binary at link time:
//
//	go build -ldflags "-X github.com/reloader-dev/reloader/controller/buildinfo.Version=v1.2.3 ..."
package buildinfo

import (
	"crypto/fips140"
	"runtime/debug"
)

// Stamped at link time; these are the only package-level variables the
// project allows, because the linker can only set variables.
var (
	Version = "dev"
	Commit  = ""
	Date    = ""
)

// Info is the build information of the running binary.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"goVersion"`
	// FIPS140 is the mode of Go's FIPS 140-3 module in this process: "only"
	// (GODEBUG=fips140=only, non-approved algorithms refused), "on", or
	// "off". A binary built with GOFIPS140 defaults to "on".
	FIPS140 string `json:"fips140"`
}

// Get returns the stamped build information, falling back to what the Go
// toolchain recorded (module version, VCS revision) for unstamped builds.
func Get() Info {
	i := Info{Version: Version, Commit: Commit, Date: Date, FIPS140: "off"}
	switch {
	case fips140.Enforced():
		i.FIPS140 = "only"
	case fips140.Enabled():
		i.FIPS140 = "on"
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		i.GoVersion = bi.GoVersion
		if i.Commit == "" {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					i.Commit = s.Value
				}
			}
		}
	}
	return i
}
