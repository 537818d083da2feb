package charts

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/downloader"
	"helm.sh/helm/v3/pkg/getter"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
	buildLog  bytes.Buffer
)

// builtChart is the chart name after `helm dependency build`, done with the
// SDK on a copy of the charts without their vendored archives: the library is
// packaged from charts/reloader-lib through the file:// repository, offline,
// and the Chart.lock digest must match Chart.yaml.
func builtChart(t *testing.T, name string) string {
	t.Helper()
	buildOnce.Do(func() { buildDir, buildErr = buildCharts() })
	if buildErr != nil {
		t.Fatalf("helm dependency build: %v\n%s", buildErr, buildLog.String())
	}
	return filepath.Join(buildDir, name)
}

func buildCharts() (string, error) {
	dir, err := os.MkdirTemp("", "reloader-charts-")
	if err != nil {
		return "", err
	}
	cleanups = append(cleanups, func() { os.RemoveAll(dir) })
	for _, name := range []string{Library, Reloader, ReloaderUBI} {
		if err := copyChart(filepath.Join(Dir(), name), filepath.Join(dir, name)); err != nil {
			return "", err
		}
	}
	settings := cli.New()
	for _, name := range []string{Reloader, ReloaderUBI} {
		m := &downloader.Manager{
			Out:       &buildLog,
			ChartPath: filepath.Join(dir, name),
			// Only file:// repositories: nothing to refresh, nothing to fetch.
			SkipUpdate:       true,
			Getters:          getter.All(settings),
			RepositoryConfig: filepath.Join(dir, "repositories.yaml"),
			RepositoryCache:  filepath.Join(dir, "cache"),
		}
		if err := m.Build(); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// copyChart copies a chart directory without its vendored dependencies.
func copyChart(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if rel == "charts" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
}

// cleanups run after all tests, from TestMain.
var cleanups []func()

// `helm dependency build` works offline from the file:// repository, and the
// result is a chart whose dependency is the library.
func TestDependencyBuildWorksOfflineFromTheLibrarySource(t *testing.T) {
	for _, name := range []string{Reloader, ReloaderUBI} {
		c, err := loader.Load(builtChart(t, name))
		if err != nil {
			t.Fatalf("loading the built %s chart: %v", name, err)
		}
		deps := c.Dependencies()
		if len(deps) != 1 || deps[0].Name() != Library || deps[0].Metadata.Type != "library" {
			t.Errorf("built %s chart depends on %v, want only the library chart %s", name, chartNames(deps), Library)
		}
	}
}

// The packaged library committed under each chart's charts/ (what `helm
// install ./charts/reloader` and `helm lint` use) is the library source.
func TestVendoredLibraryIsTheLibrarySource(t *testing.T) {
	src, err := loader.LoadDir(filepath.Join(Dir(), Library))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{Reloader, ReloaderUBI} {
		archives, _ := filepath.Glob(filepath.Join(Dir(), name, "charts", "*.tgz"))
		if len(archives) != 1 {
			t.Errorf("charts/%s/charts holds %d archives, want the one library: run `helm dependency update charts/%s`", name, len(archives), name)
			continue
		}
		vendored, err := loader.Load(archives[0])
		if err != nil {
			t.Fatalf("loading %s: %v", archives[0], err)
		}
		if vendored.Metadata.Version != src.Metadata.Version {
			t.Errorf("%s is version %s, the library source is %s", archives[0], vendored.Metadata.Version, src.Metadata.Version)
		}
		if got, want := files(vendored.Templates), files(src.Templates); !equalMaps(got, want) {
			t.Errorf("the templates in %s differ from charts/%s: run `helm dependency update charts/%s`", archives[0], Library, name)
		}
	}
}

// reloader-ubi differs from reloader in the image repository and nothing else:
// its only template is the same include, its schema is the same file, its
// values differ in image.repository alone.
func TestUBIChartSharesEverythingButTheImageWithReloader(t *testing.T) {
	read := func(chart, file string) string {
		b, err := os.ReadFile(filepath.Join(Dir(), chart, file))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, file := range []string{"values.schema.json", "templates/reloader.yaml", "templates/NOTES.txt"} {
		if read(Reloader, file) != read(ReloaderUBI, file) {
			t.Errorf("charts/%s/%s differs from charts/%s/%s", ReloaderUBI, file, Reloader, file)
		}
	}
	ubiValues := strings.Replace(read(ReloaderUBI, "values.yaml"),
		"repository: ghcr.io/reloader-dev/reloader-ubi\n", "repository: ghcr.io/reloader-dev/reloader\n", 1)
	if ubiValues != read(Reloader, "values.yaml") {
		t.Errorf("charts/%s/values.yaml differs from charts/%s/values.yaml beyond image.repository", ReloaderUBI, Reloader)
	}
	for _, name := range []string{Reloader, ReloaderUBI} {
		entries, err := os.ReadDir(filepath.Join(Dir(), name, "templates"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != "reloader.yaml" && e.Name() != "NOTES.txt" {
				t.Errorf("charts/%s/templates/%s: templates belong in charts/%s", name, e.Name(), Library)
			}
		}
	}
	if got := deployment(t, render(t, ReloaderUBI, Release{Name: "rel", Namespace: "ops"})).Spec.Template.Spec.Containers[0].Image; !strings.HasPrefix(got, "ghcr.io/reloader-dev/reloader-ubi:") {
		t.Errorf("reloader-ubi runs image %q, want the UBI repository ghcr.io/reloader-dev/reloader-ubi", got)
	}
}

func files(fs []*chart.File) map[string]string {
	m := map[string]string{}
	for _, f := range fs {
		m[f.Name] = string(f.Data)
	}
	return m
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func chartNames(cs []*chart.Chart) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name())
	}
	return out
}
