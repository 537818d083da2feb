//go:build !race

package mirror_test

import (
	"context"

	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release/trust"
	testregistry "github.com/reloader-dev/reloader/test/registry"
)

// Without the race detector the tests publish in process, through the
// release pipeline itself.
type (
	fixtureRelease = releasetest.Release
	fixtureSigner  = releasetest.Signer
	publishOptions = releasetest.Options
)

func publishTo(keyDir string, src *testregistry.Registry, tp *tamperer, mutate func(*releasetest.Options)) (fixture, error) {
	s, err := releasetest.NewKeySigner(keyDir)
	if err != nil {
		return fixture{}, err
	}
	opts := releasetest.Options{Registry: src.Host, Signer: s, Seed: 1}
	if mutate != nil {
		mutate(&opts)
	}
	rel, err := releasetest.Publish(context.Background(), opts)
	if err != nil {
		return fixture{}, err
	}
	pub, err := s.PublicKey()
	if err != nil {
		return fixture{}, err
	}
	return fixture{src: src, tamper: tp, rel: rel, signer: s, policy: trust.Policy{PublicKey: pub}}, nil
}
