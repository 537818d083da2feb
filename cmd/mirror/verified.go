package main

import (
	"context"

	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release"
)

// verifiesHelp is how values and policy (the command's name goes first)
// say what they check before they print anything.
const verifiesHelp = ` verifies the release completely and offline, as verify does: the
lock's signature, then every signature, attestation and provenance the lock
lists, each against its artifact. It reads the release from --file, or with
--lock / --lock-ref from the registries the lock names (from --target when
--lock-ref is the target's copy of the lock). If any artifact fails, it exits
3 naming that artifact and prints nothing.`

// verifiedRelease is what values and policy start from: the release fully
// verified (the lock's signature and every signature, attestation and
// provenance the lock lists, as verify does) and its mapping to --target.
// A policy that admits images, or values that pin them, must not be written
// for a release whose artifacts are not the signer's, however well its
// lock is signed.
func (g *command) verifiedRelease(ctx context.Context, cl *registry.Client, in *releaseInput) (*mirror.Verified, *mirror.Mapping, error) {
	l, m, err := g.lockAndMapping(in)
	if err != nil {
		return nil, nil, err
	}
	prep, err := in.lock.Verify(ctx, g.verificationSource(cl, in, l, m))
	if err != nil {
		return nil, nil, err
	}
	return prep, m, nil
}

// verificationSource is where the release is verified: the archive (--file),
// or the registries the lock names (--lock, --lock-ref), except that a lock
// read from the target's own copy (--lock-ref <target>/reloader-release:v…,
// the disconnected side, where the lock's registries are out of reach)
// means the copy at the target is what is verified.
func (g *command) verificationSource(cl *registry.Client, in *releaseInput, l *release.Lock, m *mirror.Mapping) mirror.Source {
	if in.archive != nil {
		return in.src
	}
	if src := m.TargetSourceFor(g.lockRef, cl, l.Version); src != nil {
		return src
	}
	return in.src
}
