package mirror

import (
	"context"
	"io"

	"github.com/reloader-dev/reloader/mirror/registry"
)

// RegistrySource reads a release from registries, mapping each lock
// repository through Map (identity when nil).
type RegistrySource struct {
	Client *registry.Client
	Map    func(repo string) string
	Name   string
	// Concurrency bounds the reads of a release that overlap (0 means
	// 4): its manifests, level by level, and its signature layers.
	Concurrency int
}

func (s *RegistrySource) parallelReads() int {
	if s.Concurrency <= 0 {
		return 4
	}
	return s.Concurrency
}

func (s *RegistrySource) repo(ctx context.Context, repo string) (*registry.Repository, error) {
	if s.Map != nil {
		repo = s.Map(repo)
	}
	return s.Client.Repository(ctx, repo, false)
}

// Manifest implements Source.
func (s *RegistrySource) Manifest(ctx context.Context, repo, digest string) ([]byte, error) {
	r, err := s.repo(ctx, repo)
	if err != nil {
		return nil, err
	}
	b, _, err := r.GetManifest(ctx, digest)
	return b, err
}

// Blob implements Source.
func (s *RegistrySource) Blob(ctx context.Context, repo, digest string) (io.ReadCloser, int64, error) {
	r, err := s.repo(ctx, repo)
	if err != nil {
		return nil, 0, err
	}
	return r.GetBlob(ctx, digest)
}

func (s *RegistrySource) String() string {
	if s.Name != "" {
		return s.Name
	}
	return "registry"
}
