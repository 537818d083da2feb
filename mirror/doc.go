// Package mirror moves a signed Reloader release between registries and
// archives without changing a digest, and moves nothing that does not verify
// offline against the user's trust policy. The verbs, in the order a run
// takes them:
//
//   - open: the signed release lock (release.Lock) is read from a file, a
//     registry (FetchLock) or an archive (OpenArchive: one file, a layout
//     directory or split parts, checksums first);
//   - verify: VerifyLock checks the lock's signature, signer, binding and
//     scan record with a release/trust Verifier, once; the SignedLock it
//     returns then verifies the release where it is read from
//     (SignedLock.Verify: every manifest fetched by digest with BuildGraph,
//     every signature the lock lists). A failure wraps trust.ErrUntrusted.
//     What it returns, a Verified release, is the only thing that can be
//     written;
//   - judge: Judge decides the release's standing (advisories from the
//     newest signed lock known, end of support, the series being listed);
//     Verified.Push refuses a release older than the newest the target
//     holds (ErrDowngrade) unless the options allow it;
//   - copy: NewMapping maps source repositories to the target
//     (Verified.Plan reports); Verified.Push writes blobs, manifests,
//     referrers, then reads everything back and verifies the copy at the
//     target with the same Verifier; only then are tags written;
//   - export: Verified.Export writes an archive instead;
//   - import: an archive opened, verified and pushed as above;
//   - receipt: the Receipt records where every digest went.
package mirror
