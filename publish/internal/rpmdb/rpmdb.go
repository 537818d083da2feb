// Package rpmdb writes an RPM package database in the SQLite form RHEL 9
// and UBI 9 use (/var/lib/rpm/rpmdb.sqlite): one RPM header per package in
// the Packages table. The stand-in UBI base carries one so that the UBI
// variant's RPM path (syft's RPM cataloger, the review's RPM components and
// their licences) runs in tests without Red Hat's image.
package rpmdb

import (
	"bytes"
	"context"
	"crypto/md5"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	// The SQLite driver syft's RPM cataloger reads with.
	_ "modernc.org/sqlite"
)

// Path is where RHEL 9 keeps the database.
const Path = "/var/lib/rpm/rpmdb.sqlite"

// Package is what the header of one installed package says.
type Package struct {
	Name, Version, Release, Arch string
	// License is the RPM License tag (UBI 9 packages use SPDX expressions).
	License, Vendor, SourceRPM, Summary string
	// Size is the installed size in bytes.
	Size int32
}

// RPM header tags and types (rpm's lib/rpmtag.h).
const (
	tagSigMD5    = 261
	tagName      = 1000
	tagVersion   = 1001
	tagRelease   = 1002
	tagSummary   = 1004
	tagSize      = 1009
	tagVendor    = 1011
	tagLicense   = 1014
	tagArch      = 1022
	tagSourceRPM = 1044

	typeInt32  = 4
	typeString = 6
	typeBin    = 7
)

type entry struct {
	tag, typ int32
	data     []byte
}

// count is the entry's element count: bytes for binary data, else one.
func (e entry) count() int32 {
	if e.typ == typeBin {
		return int32(len(e.data))
	}
	return 1
}

// Header encodes p as an RPM header blob as the database stores it: the
// index length and data length, the index entries sorted by tag, then the
// data, each int32 aligned to four bytes. It has no immutable region, which
// readers accept as a legacy header. Its SIGMD5, rpm's digest of a package
// (header and payload), is the MD5 of the header without it: a stand-in
// package has no payload.
func Header(p Package) ([]byte, error) {
	if p.Name == "" || p.Version == "" || p.Release == "" || p.Arch == "" {
		return nil, fmt.Errorf("RPM header for %q: name, version, release and arch are required", p.Name)
	}
	str := func(tag int32, s string) entry { return entry{tag, typeString, append([]byte(s), 0)} }
	size := make([]byte, 4)
	binary.BigEndian.PutUint32(size, uint32(p.Size))
	es := []entry{str(tagName, p.Name), str(tagVersion, p.Version), str(tagRelease, p.Release), str(tagArch, p.Arch),
		{tagSize, typeInt32, size}}
	for tag, s := range map[int32]string{tagLicense: p.License, tagVendor: p.Vendor, tagSourceRPM: p.SourceRPM, tagSummary: p.Summary} {
		if s != "" {
			es = append(es, str(tag, s))
		}
	}
	digest := md5.Sum(encode(es))
	return encode(append(es, entry{tagSigMD5, typeBin, digest[:]})), nil
}

// encode writes the entries as a header blob, sorted by tag.
func encode(es []entry) []byte {
	es = append([]entry(nil), es...)
	sort.Slice(es, func(i, j int) bool { return es[i].tag < es[j].tag })
	var index, data bytes.Buffer
	for _, e := range es {
		if e.typ == typeInt32 {
			for data.Len()%4 != 0 {
				data.WriteByte(0)
			}
		}
		for _, v := range []int32{e.tag, e.typ, int32(data.Len()), e.count()} {
			_ = binary.Write(&index, binary.BigEndian, v)
		}
		data.Write(e.data)
	}
	var out bytes.Buffer
	_ = binary.Write(&out, binary.BigEndian, int32(len(es)))
	_ = binary.Write(&out, binary.BigEndian, int32(data.Len()))
	out.Write(index.Bytes())
	out.Write(data.Bytes())
	return out.Bytes()
}

// SQLite returns the bytes of a database holding pkgs, made in a scratch
// file under workDir ("" for the system's temporary directory).
func SQLite(ctx context.Context, pkgs []Package, workDir string) ([]byte, error) {
	if len(pkgs) == 0 {
		return nil, errors.New("writing an RPM database: no packages")
	}
	dir, err := os.MkdirTemp(workDir, "rpmdb-")
	if err != nil {
		return nil, fmt.Errorf("writing an RPM database: %w", err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "rpmdb.sqlite")
	db, err := sql.Open("sqlite", "file:"+file)
	if err != nil {
		return nil, fmt.Errorf("writing an RPM database: %w", err)
	}
	defer db.Close()
	// The schema of rpm's sqlite backend, Packages table.
	if _, err := db.ExecContext(ctx, `CREATE TABLE Packages (hnum INTEGER PRIMARY KEY AUTOINCREMENT, blob BLOB NOT NULL)`); err != nil {
		return nil, fmt.Errorf("writing an RPM database: %w", err)
	}
	for _, p := range pkgs {
		h, err := Header(p)
		if err != nil {
			return nil, fmt.Errorf("writing an RPM database: %w", err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO Packages (blob) VALUES (?)`, h); err != nil {
			return nil, fmt.Errorf("writing an RPM database: package %s: %w", p.Name, err)
		}
	}
	if err := db.Close(); err != nil {
		return nil, fmt.Errorf("writing an RPM database: %w", err)
	}
	return os.ReadFile(file)
}
