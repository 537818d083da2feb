package mirror

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/reloader-dev/reloader/release/trust"
)

// ErrDigestMismatch says content does not match the digest it was asked for.
var errDigestMismatch = fmt.Errorf("%w: content does not match its digest", trust.ErrUntrusted)

// IsDigestMismatch reports whether err is a content/digest disagreement,
// which no retry can fix.
func IsDigestMismatch(err error) bool { return errors.Is(err, errDigestMismatch) }

// VerifyingReader checks, as the last byte is read, that what was read has
// the expected digest and size; it fails the read otherwise, so a consumer
// streaming it (an upload) never completes with wrong content.
type VerifyingReader struct {
	r      io.Reader
	h      hash.Hash
	digest string
	size   int64
	n      int64
	failed error
}

// NewVerifyingReader wraps r; size < 0 means unknown.
func NewVerifyingReader(r io.Reader, digest string, size int64) *VerifyingReader {
	return &VerifyingReader{r: r, h: sha256.New(), digest: digest, size: size}
}

func (v *VerifyingReader) Read(p []byte) (int, error) {
	if v.failed != nil {
		return 0, v.failed
	}
	n, err := v.r.Read(p)
	v.n += int64(n)
	v.h.Write(p[:n])
	if v.size >= 0 && v.n > v.size {
		v.failed = fmt.Errorf("blob %s: more than the %d bytes expected: %w", v.digest, v.size, errDigestMismatch)
		return n, v.failed
	}
	if err == io.EOF {
		got := "sha256:" + hex.EncodeToString(v.h.Sum(nil))
		if v.size >= 0 && v.n != v.size {
			v.failed = fmt.Errorf("blob %s: %d bytes, expected %d: %w", v.digest, v.n, v.size, io.ErrUnexpectedEOF)
			return n, v.failed
		}
		if got != v.digest {
			v.failed = fmt.Errorf("blob %s: content has digest %s: %w", v.digest, got, errDigestMismatch)
			return n, v.failed
		}
	}
	return n, err
}

// Mismatch returns the digest error the reader found, if any.
func (v *VerifyingReader) Mismatch() error {
	if v.failed != nil && errors.Is(v.failed, errDigestMismatch) {
		return v.failed
	}
	return nil
}
