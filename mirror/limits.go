package mirror

import (
	"os"

	"github.com/reloader-dev/reloader/mirror/archive"
)

// ArchiveLimits bounds what opening an archive may extract. Zero fields
// take their default from the free space of the work directory
// (archive.DefaultLimits).
type ArchiveLimits struct {
	MaxBytes   int64
	MaxEntries int
}

// unpackOptions resolves limits against the free space where the archive
// is unpacked.
func (l ArchiveLimits) unpackOptions(workDir string) (archive.UnpackOptions, error) {
	if workDir == "" {
		workDir = os.TempDir()
	}
	opts, err := archive.DefaultLimits(workDir)
	if err != nil {
		return opts, err
	}
	if l.MaxBytes > 0 {
		opts.MaxBytes = l.MaxBytes
	}
	if l.MaxEntries > 0 {
		opts.MaxEntries = l.MaxEntries
	}
	return opts, nil
}
