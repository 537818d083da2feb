// Package mirror moves a signed Reloader release between registries and
// archives without changing a digest, and moves nothing that does not verify
// offline against the user's trust policy. The data path of a run:
//
//   - lock: the signed release lock (release.Lock) is read from a file, a
//     registry (FetchLock) or an archive (OpenArchive, checksums first);
//   - verify: Prepare checks the lock's signature with a release/trust
//     Verifier, fetches every manifest by digest (Build) and verifies every
//     signature the lock lists; a failure wraps trust.ErrUntrusted;
//   - plan: NewMapping maps source repositories to the target (Plan reports);
//   - push: Mirror writes blobs, manifests, referrers, then reads everything
//     back and verifies again at the target; only then are tags written;
//   - receipt: the Receipt records where every digest went.
package mirror
