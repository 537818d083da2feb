package sbom

import (
	"archive/tar"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/anchore/syft/syft/pkg"
	"github.com/anchore/syft/syft/sbom"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// deployables are the files an image delivers its components in, as BSI
// TR-03183-2 v2.1.0 asks the SBOM to name and hash them (SHA-512): every
// layer, the file a registry serves and a node pulls, and every Go binary,
// the file the Go modules compiled into it are deployed as.
type deployables struct {
	// layers are the image's layers by diffID (the id syft records as a
	// location's layerID).
	layers map[string]layerFile
	// binaries are the SHA-512 (hex) of the Go binaries, by path.
	binaries map[string]string
}

// layerFile is one layer as the registry serves it.
type layerFile struct {
	// Digest is the compressed blob's digest, its name in the registry.
	Digest string
	// SHA512 is the hex SHA-512 of the same bytes.
	SHA512 string
}

// readDeployables hashes every layer of img and every Go binary syft
// catalogued in s. A binary is read from the layer syft found it in.
func readDeployables(img v1.Image, s *sbom.SBOM) (deployables, error) {
	d := deployables{layers: map[string]layerFile{}, binaries: map[string]string{}}
	wanted := map[string]map[string]bool{} // diffID -> paths
	if s.Artifacts.Packages != nil {
		for _, p := range s.Artifacts.Packages.Sorted(pkg.GoModulePkg) {
			for _, l := range p.Locations.ToSlice() {
				if wanted[l.FileSystemID] == nil {
					wanted[l.FileSystemID] = map[string]bool{}
				}
				wanted[l.FileSystemID][l.RealPath] = true
			}
		}
	}
	layers, err := img.Layers()
	if err != nil {
		return d, fmt.Errorf("reading the image's layers: %w", err)
	}
	for _, l := range layers {
		diffID, err := l.DiffID()
		if err != nil {
			return d, fmt.Errorf("reading a layer's diffID: %w", err)
		}
		lf, err := hashLayer(l)
		if err != nil {
			return d, fmt.Errorf("hashing layer %s: %w", diffID, err)
		}
		// syft names a layer by its diffID; the blob digest is accepted
		// too, so a change of that habit cannot unhash a layer silently.
		d.layers[diffID.String()], d.layers[lf.Digest] = lf, lf
		paths := map[string]bool{}
		for _, id := range []string{diffID.String(), lf.Digest} {
			for p := range wanted[id] {
				paths[p] = true
			}
		}
		if len(paths) == 0 {
			continue
		}
		if err := hashFiles(l, paths, d.binaries); err != nil {
			return d, fmt.Errorf("hashing the binaries of layer %s: %w", diffID, err)
		}
	}
	return d, nil
}

func hashLayer(l v1.Layer) (layerFile, error) {
	dgst, err := l.Digest()
	if err != nil {
		return layerFile{}, err
	}
	rc, err := l.Compressed()
	if err != nil {
		return layerFile{}, err
	}
	defer rc.Close()
	h := sha512.New()
	if _, err := io.Copy(h, rc); err != nil {
		return layerFile{}, err
	}
	return layerFile{Digest: dgst.String(), SHA512: hex.EncodeToString(h.Sum(nil))}, nil
}

// hashFiles writes the SHA-512 of each regular file of l named in paths
// (absolute, as syft names them) into out.
func hashFiles(l v1.Layer, paths map[string]bool, out map[string]string) error {
	rc, err := l.Uncompressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		p := path.Clean("/" + strings.TrimPrefix(hdr.Name, "./"))
		if hdr.Typeflag != tar.TypeReg || !paths[p] {
			continue
		}
		h := sha512.New()
		if _, err := io.Copy(h, tr); err != nil {
			return fmt.Errorf("reading %s: %w", p, err)
		}
		out[p] = hex.EncodeToString(h.Sum(nil))
	}
}
