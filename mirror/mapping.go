package mirror

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release"
)

// Mapping decides where each lock repository goes at the target: Target
// joined with the repository's path below the lock's common prefix
// ("ghcr.io/reloader-dev/charts/reloader" -> "<target>/charts/reloader"),
// unless Repos names it explicitly (by full name or by that relative path).
// This fits Harbor projects ("harbor.example/project/sub") and Artifactory
// repository keys ("artifactory.example/docker-local/path") alike.
type Mapping struct {
	Target string
	Repos  map[string]string
	prefix string
}

// NewMapping builds the mapping for the lock's repositories and refuses one
// that sends two repositories to the same place.
func NewMapping(target string, l *release.Lock, repos map[string]string) (*Mapping, error) {
	m := &Mapping{Target: strings.TrimSuffix(target, "/"), Repos: repos}
	var names []string
	seen := map[string]bool{}
	for _, a := range l.Artifacts {
		if !seen[a.Repository] {
			seen[a.Repository] = true
			names = append(names, a.Repository)
		}
	}
	sort.Strings(names)
	m.prefix = commonDir(names)
	dst := map[string]string{}
	for _, n := range names {
		t := m.Repository(n)
		if other, ok := dst[t]; ok {
			return nil, fmt.Errorf("repositories %s and %s would both go to %s: map one with --map", other, n, t)
		}
		dst[t] = n
	}
	return m, nil
}

// TargetSourceFor is where a release whose lock was fetched from lockRef is
// read: the copy at the target when lockRef is the target's own copy of the
// lock (<target>/reloader-release:v…, the disconnected side, where the
// registries the lock names are out of reach); nil otherwise.
func (m *Mapping) TargetSourceFor(lockRef string, cl *registry.Client, version string) Source {
	if lockRef == "" || LockRepository(lockRef) != m.Target+"/"+release.LockRepository {
		return nil
	}
	return &RegistrySource{Client: cl, Map: m.Repository, Name: "target " + m.Target + " (release " + version + ")"}
}

// Repository maps one lock repository.
func (m *Mapping) Repository(repo string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(repo, m.prefix), "/")
	if rel == "" {
		rel = path.Base(repo)
	}
	if r, ok := m.Repos[repo]; ok {
		return r
	}
	if r, ok := m.Repos[rel]; ok {
		return r
	}
	return m.Target + "/" + rel
}

func commonDir(names []string) string {
	if len(names) == 0 {
		return ""
	}
	prefix := path.Dir(names[0])
	for _, n := range names[1:] {
		for prefix != "." && prefix != "/" && !strings.HasPrefix(n, prefix+"/") {
			prefix = path.Dir(prefix)
		}
	}
	if prefix == "." || prefix == "/" {
		return ""
	}
	return prefix
}
