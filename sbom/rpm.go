package sbom

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	rpmdb "github.com/anchore/go-rpmdb/pkg"
	"github.com/anchore/syft/syft/file"
	"github.com/anchore/syft/syft/pkg"
	"github.com/anchore/syft/syft/sbom"
	"github.com/anchore/syft/syft/source"
)

// rpmDigests returns the package digest the RPM database records for each
// RPM syft catalogued (SIGMD5, rpm's MD5 of header and payload), keyed by
// the package's PURL. syft reads the database but keeps no digest; the
// review's CISA 2025 profile wants a hash of every component. A package
// whose database entry records none is left out: its SBOM entry then has
// no hash, which the review names.
func rpmDigests(s *sbom.SBOM, src source.Source, workDir string) (map[string]string, error) {
	out := map[string]string{}
	if s.Artifacts.Packages == nil {
		return out, nil
	}
	rpms := s.Artifacts.Packages.Sorted(pkg.RpmPkg)
	if len(rpms) == 0 {
		return out, nil
	}
	res, err := src.FileResolver(source.SquashedScope)
	if err != nil {
		return nil, fmt.Errorf("reading the RPM database: %w", err)
	}
	type key struct {
		name, version, release, arch string
		epoch                        int
	}
	read := map[string]map[key]string{}
	for _, p := range rpms {
		md, ok := p.Metadata.(pkg.RpmDBEntry)
		if !ok || p.PURL == "" {
			continue
		}
		for _, loc := range p.Locations.ToSlice() {
			db, done := read[loc.RealPath]
			if !done {
				pkgs, err := readRPMDB(res, loc, workDir)
				if err != nil {
					return nil, err
				}
				db = map[key]string{}
				for _, ip := range pkgs {
					k := key{ip.Name, ip.Version, ip.Release, ip.Arch, 0}
					if ip.Epoch != nil {
						k.epoch = *ip.Epoch
					}
					db[k] = ip.SigMD5
				}
				read[loc.RealPath] = db
			}
			k := key{md.Name, md.Version, md.Release, md.Arch, 0}
			if md.Epoch != nil {
				k.epoch = *md.Epoch
			}
			if d := db[k]; len(d) == 32 {
				out[p.PURL] = d
			}
		}
	}
	return out, nil
}

// readRPMDB lists the packages of the RPM database at loc, through a
// scratch copy: the reader opens databases by path only.
func readRPMDB(res file.Resolver, loc file.Location, workDir string) ([]*rpmdb.PackageInfo, error) {
	rc, err := res.FileContentsByLocation(loc)
	if err != nil {
		return nil, fmt.Errorf("reading the RPM database %s: %w", loc.RealPath, err)
	}
	defer rc.Close()
	dir, err := os.MkdirTemp(workDir, "rpmdb-")
	if err != nil {
		return nil, fmt.Errorf("reading the RPM database %s: %w", loc.RealPath, err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, filepath.Base(loc.RealPath))
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("reading the RPM database %s: %w", loc.RealPath, err)
	}
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		return nil, fmt.Errorf("reading the RPM database %s: %w", loc.RealPath, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("reading the RPM database %s: %w", loc.RealPath, err)
	}
	db, err := rpmdb.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening the RPM database %s: %w", loc.RealPath, err)
	}
	defer db.Close()
	pkgs, err := db.ListPackages()
	if err != nil {
		return nil, fmt.Errorf("listing the RPM database %s: %w", loc.RealPath, err)
	}
	return pkgs, nil
}
