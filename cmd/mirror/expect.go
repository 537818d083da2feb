package main

import (
	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/release/trust"
)

// expectFlags say which release the user asked for, and whether an older
// one may replace what the target holds.
type expectFlags struct {
	version        string
	allowDowngrade bool
}

// replayHelp is the rule, as every command's --help states it.
const replayHelp = `

A signature only says the signer made that lock at some time, so the release
is also held to the one you asked for, after its signature verified: a lock
fetched by a version tag (--lock-ref ...:v1.2.3) must be that version, and
--expect-version v1.2.3 requires exactly that version of any lock, file or
archive. Otherwise the command exits 3 naming both versions.`

// downgradeHelp is the rule copy and import add.
const downgradeHelp = `

Before pushing, the versions the target already holds are read (the tags of
its reloader-release repository): a release older than the newest one there
is refused (exit 3, naming both) unless --allow-downgrade is given, which the
receipt records. The same release again is a no-op.`

// replayRules states the rules in each command's --help: every one takes a
// release (and declares --expect-version), and copy and import also push it.
func replayRules(root *cobra.Command) {
	for _, c := range root.Commands() {
		long := c.Long
		if long == "" {
			long = c.Short + "."
		}
		long += replayHelp
		if c.Flags().Lookup("allow-downgrade") != nil {
			long += downgradeHelp
		}
		c.Long = long
	}
}

// binding is the release the flags ask for: the tag of --lock-ref and
// --expect-version.
func (g *command) binding() trust.Binding {
	return trust.Binding{Tag: mirror.LockTag(g.lockRef), Version: g.expect.version}
}

// verifierFor verifies another release's lock than the one asked for (the
// newest at the target, a previous release, the one a review compares
// with), with the same signer: it is held to the tag it was fetched by
// (none for a file or archive), not to --expect-version. Its scan record is
// not judged: it is read for its advisories or approved for a rollout
// window, and the release asked for is the one the scan policy is about.
func (in *releaseInput) verifierFor(tag string) (*trust.Verifier, error) {
	p := in.policy
	p.Expect = trust.Binding{Tag: tag}
	p.Scan = nil
	return in.vs.make(p)
}
