// Command publish runs releasetest.Publish (the key-signed fast mode) into a
// registry and prints the release as JSON. It serves test binaries that must
// not link the release pipeline: the mirror's race-detector tests, where
// instrumenting a release build (syft, Helm, the image builder) finds no
// race of ours and costs minutes of compile on a cold cache.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/reloader-dev/reloader/publish/releasetest"
)

// Output is what publish prints: the published release and the public key
// that verifies it.
type Output struct {
	LockJSON, LockBundle []byte
	LockRef              string
	Indexes, Charts      map[string]string
	Chart                string
	PublicKeyPEM         []byte
}

func main() {
	registry := flag.String("registry", "", "registry to publish into (127.0.0.1:port)")
	seed := flag.Uint64("seed", 1, "seed stamped as the commit (same seed, same digests)")
	keyDir := flag.String("key-dir", "", "directory for the generated cosign key pair")
	flag.Parse()
	if *registry == "" || *keyDir == "" {
		fmt.Fprintln(os.Stderr, "usage: publish -registry HOST:PORT -key-dir DIR [-seed N]")
		os.Exit(2)
	}
	if err := run(context.Background(), *registry, *keyDir, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "publish:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, registry, keyDir string, seed uint64) error {
	s, err := releasetest.NewKeySigner(keyDir)
	if err != nil {
		return fmt.Errorf("making the release key: %w", err)
	}
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: registry, Signer: s, Seed: seed})
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(Output{
		LockJSON: rel.LockJSON, LockBundle: rel.LockBundle, LockRef: rel.LockRef,
		Indexes: rel.Indexes, Charts: rel.Charts, Chart: rel.Chart, PublicKeyPEM: s.PublicKeyPEM(),
	})
}
