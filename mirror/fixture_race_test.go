//go:build race

package mirror_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
	testregistry "github.com/reloader-dev/reloader/test/registry"
	"github.com/reloader-dev/reloader/test/tools"
)

// Under the race detector the release is published by a separate, plain
// process (publish/releasetest/internal/publish) into the test's registry:
// linking the pipeline here would instrument syft, Helm and the image
// builder, which find no race of ours, and cost minutes of compile on a cold
// cache. What the tests mirror is the same pipeline's output.
type fixtureRelease struct {
	Lock                 *release.Lock
	LockJSON, LockBundle []byte
	LockRef              string
	Indexes, Charts      map[string]string
	Chart                string
}

type fixtureSigner struct{ pub []byte }

func (s fixtureSigner) PublicKeyPEM() []byte { return s.pub }

// publishOptions exist only in the plain build: tests that change how the
// release is made do not run under the race detector.
type publishOptions struct{}

func publishTo(keyDir string, src *testregistry.Registry, tp *tamperer, mutate func(*publishOptions)) (fixture, error) {
	if mutate != nil {
		return fixture{}, errors.New("a changed release is published only without the race detector")
	}
	// Only the shared release is published under race, once per process,
	// into keyDir, which the test binary removes when it is done.
	bin := filepath.Join(keyDir, "publish")
	if err := tools.GoBuild(context.Background(), "./publish/releasetest/internal/publish", bin); err != nil {
		return fixture{}, fmt.Errorf("building the test release publisher: %w", err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "-registry", src.Host, "-key-dir", keyDir, "-seed", "1")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fixture{}, fmt.Errorf("publishing the test release: %w\n%s", err, stderr.String())
	}
	var out struct {
		LockJSON, LockBundle []byte
		LockRef              string
		Indexes, Charts      map[string]string
		Chart                string
		PublicKeyPEM         []byte
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return fixture{}, fmt.Errorf("reading the published test release: %w", err)
	}
	l, err := release.Parse(out.LockJSON)
	if err != nil {
		return fixture{}, fmt.Errorf("reading the published test release's lock: %w", err)
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(out.PublicKeyPEM)
	if err != nil {
		return fixture{}, fmt.Errorf("reading the test release's public key: %w", err)
	}
	rel := &fixtureRelease{Lock: l, LockJSON: out.LockJSON, LockBundle: out.LockBundle, LockRef: out.LockRef,
		Indexes: out.Indexes, Charts: out.Charts, Chart: out.Chart}
	return fixture{src: src, tamper: tp, rel: rel, signer: fixtureSigner{pub: out.PublicKeyPEM}, policy: trust.Policy{PublicKey: pub}}, nil
}
