package trust

import (
	"context"
	"crypto/sha256"

	"golang.org/x/sync/errgroup"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/provenance"
)

// ParallelContent is Content that may be read from several goroutines at
// once: the Verifier then checks up to Parallel() signatures at a time (a
// release's attestations are large JSON documents, each a few milliseconds
// of one core). The Result is the same, in the same order.
type ParallelContent interface {
	Content
	Parallel() int
}

// checkedSignature is the outcome of verifying one signature artifact.
type checkedSignature struct {
	statements []Statement
	err        error
}

// verifySignatures verifies every signature of every subject, keyed
// "subject signature", up to c's Parallel() at a time (one at a time, in
// order, for a Content that is not a ParallelContent).
func (v *Verifier) verifySignatures(ctx context.Context, c Content, subjects []release.Artifact, bySubject map[string][]release.Artifact) map[string]checkedSignature {
	type job struct {
		subject string
		sig     release.Artifact
	}
	var jobs []job
	for _, a := range subjects {
		for _, s := range bySubject[a.Digest] {
			jobs = append(jobs, job{a.Digest, s})
		}
	}
	out := make([]checkedSignature, len(jobs))
	n := 1
	if pc, ok := c.(ParallelContent); ok {
		n = max(pc.Parallel(), 1)
	}
	var eg errgroup.Group
	eg.SetLimit(n)
	for i, j := range jobs {
		eg.Go(func() error {
			sts, err := v.verifySignature(ctx, c, j.sig, j.subject)
			out[i] = checkedSignature{sts, err}
			return nil
		})
	}
	_ = eg.Wait() // outcomes are in out
	byKey := make(map[string]checkedSignature, len(jobs))
	for i, j := range jobs {
		byKey[j.subject+" "+j.sig.Digest] = out[i]
	}
	return byKey
}

// parsedStatement is what InTotoStatement found in one payload.
type parsedStatement struct {
	predicateType string
	statement     []byte
}

// statement is InTotoStatement, remembered by the payload's sha256: a copy
// is verified at its source and again at its target, and an SBOM
// attestation is megabytes of JSON whose parse is a large share of a
// verification. The signature itself is verified on every call; only the
// parse of the same bytes is not repeated.
func (v *Verifier) statement(format string, payload []byte) (string, []byte) {
	key := parsedKey{format, sha256.Sum256(payload)}
	if p, ok := v.statements.Load(key); ok {
		ps := p.(parsedStatement)
		return ps.predicateType, ps.statement
	}
	pt, st := InTotoStatement(format, payload)
	v.statements.Store(key, parsedStatement{pt, st})
	return pt, st
}

type parsedKey struct {
	format string
	sum    [sha256.Size]byte
}

// parsedProvenance is what provenance.Parse made of one statement.
type parsedProvenance struct {
	st  *provenance.Statement
	err error
}

// parseProvenance is provenance.Parse, remembered by the statement's
// sha256, for the reason statement is: the read-back at a target meets the
// same bytes again. The result is only read, never changed.
func (v *Verifier) parseProvenance(raw []byte) (*provenance.Statement, error) {
	key := sha256.Sum256(raw)
	if p, ok := v.provenances.Load(key); ok {
		pp := p.(parsedProvenance)
		return pp.st, pp.err
	}
	st, err := provenance.Parse(raw)
	v.provenances.Store(key, parsedProvenance{st, err})
	return st, err
}

// verifiedKey names one signature artifact verified for one subject, in
// one format: Verifier.verified holds its statements. Only successes are
// kept, so a failure is always verified (and reported) afresh. A Verifier
// is made per command run and its policy never changes, so a result cannot
// outlive the policy or the time it was reached under.
type verifiedKey struct {
	subject, signature, format string
}
