// Package mirror moves a signed Reloader release between registries and
// archives without changing a digest, and moves nothing that does not verify
// offline against the user's trust policy. The data path of a run:
//
//   - lock: the signed release lock (release.Lock) is read from a file, a
//     registry (FetchLock) or an archive (OpenArchive, checksums first);
//   - verify: Verify checks the lock's signature with a release/trust
//     Verifier, fetches every manifest by digest (BuildGraph) and verifies
//     every signature the lock lists; a failure wraps trust.ErrUntrusted.
//     What it returns, a Release, is the only thing that can be written;
//   - plan: NewMapping maps source repositories to the target
//     (Release.Plan reports);
//   - push: Release.Push writes blobs, manifests, referrers, then reads
//     everything back and verifies again at the target with the same
//     Verifier; only then are tags written (Release.Export writes an
//     archive instead);
//   - receipt: the Receipt records where every digest went.
package mirror
