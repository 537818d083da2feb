package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/archive"
)

// archiveLimits are the bounds on unpacking an archive (--file), for every
// command that reads one.
type archiveLimits struct {
	maxSize    sizeFlag
	maxEntries int
}

func (a *archiveLimits) register(fs *pflag.FlagSet) {
	fs.Var(&a.maxSize, "max-archive-size", "refuse an archive (--file) that would unpack to more than this, e.g. 20GiB (default: 90% of the work directory's free space, at most 256GiB)")
	fs.IntVar(&a.maxEntries, "max-entries", archive.DefaultMaxEntries, "refuse an archive (--file) with more entries than this")
}

func (a *archiveLimits) limits() mirror.ArchiveLimits {
	return mirror.ArchiveLimits{MaxBytes: int64(a.maxSize), MaxEntries: a.maxEntries}
}

// sizeFlag is a byte count written as a person writes it (512MiB, 20GiB).
type sizeFlag int64

func (s *sizeFlag) String() string {
	if *s == 0 {
		return ""
	}
	return strconv.FormatInt(int64(*s), 10)
}

func (s *sizeFlag) Set(v string) error {
	n, err := archive.ParseSize(v)
	if err != nil {
		return err
	}
	if n <= 0 {
		return fmt.Errorf("size %q: must be more than 0 bytes", v)
	}
	*s = sizeFlag(n)
	return nil
}

func (s *sizeFlag) Type() string { return "size" }
