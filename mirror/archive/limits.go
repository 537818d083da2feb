package archive

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"syscall"
)

// Default bounds of Unpack when neither the caller nor the free space of
// the work directory says less.
const (
	DefaultMaxBytes   int64 = 256 << 30
	DefaultMaxEntries       = 1_000_000
)

// DefaultLimits bounds unpacking into dir: at most 90% of the space free
// there (so a hostile archive cannot fill the disk before its checksums or
// signature are read), and never more than DefaultMaxBytes.
func DefaultLimits(dir string) (UnpackOptions, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return UnpackOptions{}, fmt.Errorf("reading the free space of %s: %w", dir, err)
	}
	opts := UnpackOptions{MaxBytes: DefaultMaxBytes, MaxEntries: DefaultMaxEntries}
	free := uint64(math.MaxUint64)
	if hi, lo := bits.Mul64(uint64(st.Bavail), uint64(st.Bsize)); hi == 0 {
		free = lo
	}
	if f := free / 10 * 9; f < uint64(opts.MaxBytes) {
		opts.MaxBytes = int64(f)
	}
	return opts, nil
}

// ParseSize reads a byte count as a person writes it: "1073741824", "512MiB",
// "64GiB", "1TiB", "10GB" (powers of 1000) or "10k". It refuses negative,
// fractional and overflowing values.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("size %q: want a whole number of bytes, optionally with a unit (KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	unit := strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := map[string]int64{
		"": 1, "b": 1,
		"k": 1 << 10, "ki": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mi": 1 << 20, "mib": 1 << 20,
		"g": 1 << 30, "gi": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "ti": 1 << 40, "tib": 1 << 40,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	}[unit]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (want KiB, MiB, GiB, TiB, KB, MB, GB or TB)", s, t[i:])
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return n * mult, nil
}
