package charts

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// The charts in this directory.
const (
	Reloader    = "reloader"
	ReloaderUBI = "reloader-ubi"
	Library     = "reloader-lib"
)

// Dir is the directory holding the charts. It is found from this source file,
// so tests of other packages can render the charts without knowing where the
// checkout is; a -trimpath build (as make test compiles) records no absolute
// source path, so then it is found above the working directory instead.
func Dir() string {
	if _, file, _, ok := goruntime.Caller(0); ok && isChartsDir(filepath.Dir(file)) {
		return filepath.Dir(file)
	}
	wd, err := os.Getwd()
	if err != nil {
		panic("charts: cannot locate the charts directory: " + err.Error())
	}
	for d := wd; ; d = filepath.Dir(d) {
		for _, c := range []string{d, filepath.Join(d, "charts")} {
			if isChartsDir(c) {
				return c
			}
		}
		if filepath.Dir(d) == d {
			panic("charts: cannot locate the charts directory above " + wd)
		}
	}
}

func isChartsDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, Library, "Chart.yaml"))
	return err == nil
}

// Load loads the chart name from source with the library taken from
// charts/reloader-lib rather than the archive vendored under name/charts/: the
// in-memory equivalent of `helm dependency build`, so what is rendered is the
// templates as they are in the checkout. (A test keeps the vendored archive
// equal to the source.)
func Load(name string) (*chart.Chart, error) {
	c, err := loader.LoadDir(filepath.Join(Dir(), name))
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", name, err)
	}
	lib, err := loader.LoadDir(filepath.Join(Dir(), Library))
	if err != nil {
		return nil, fmt.Errorf("loading library chart %s: %w", Library, err)
	}
	var deps []*chart.Chart
	for _, d := range c.Dependencies() {
		if d.Name() != Library {
			deps = append(deps, d)
		}
	}
	c.SetDependencies(append(deps, lib)...)
	return c, nil
}

// Release says what is being installed: the release name and namespace, the
// values a user would pass with -f/--set, and the Kubernetes version the
// chart is rendered for (empty: Helm's default).
type Release struct {
	Name        string
	Namespace   string
	Values      map[string]any
	KubeVersion string
}

// Render renders the chart as `helm install --dry-run` does, values schema
// validation included, and returns the manifest (without NOTES).
func Render(c *chart.Chart, rel Release) (string, error) {
	install := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	install.ClientOnly = true
	install.DryRun = true
	install.ReleaseName = rel.Name
	install.Namespace = rel.Namespace
	if rel.KubeVersion != "" {
		kv, err := chartutil.ParseKubeVersion(rel.KubeVersion)
		if err != nil {
			return "", fmt.Errorf("rendering chart %s: Kubernetes version %q: %w", c.Name(), rel.KubeVersion, err)
		}
		install.KubeVersion = kv
	}
	vals := rel.Values
	if vals == nil {
		vals = map[string]any{}
	}
	r, err := install.Run(c, vals)
	if err != nil {
		return "", fmt.Errorf("rendering chart %s as release %s/%s: %w", c.Name(), rel.Namespace, rel.Name, err)
	}
	return r.Manifest, nil
}

// RenderObjects loads chart name from source, renders it for rel and splits
// the manifest into objects.
func RenderObjects(name string, rel Release) ([]*unstructured.Unstructured, error) {
	c, err := Load(name)
	if err != nil {
		return nil, err
	}
	manifest, err := Render(c, rel)
	if err != nil {
		return nil, err
	}
	return Objects(manifest)
}

// OfKind are the objects of kind.
func OfKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// DeploymentOf is the one Deployment a chart renders, typed.
func DeploymentOf(objs []*unstructured.Unstructured) (*appsv1.Deployment, error) {
	ds := OfKind(objs, "Deployment")
	if len(ds) != 1 {
		return nil, fmt.Errorf("rendered %d Deployments, want 1", len(ds))
	}
	var d appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(ds[0].Object, &d); err != nil {
		return nil, fmt.Errorf("rendered Deployment %s does not convert to apps/v1: %w", ds[0].GetName(), err)
	}
	return &d, nil
}

// Objects splits a rendered manifest into objects. Numbers come out as int64,
// as from the apiserver, so typed conversions and NestedInt64 work.
func Objects(manifest string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("decoding the rendered manifest: %w", err)
		}
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("decoding rendered object %.120s: %w", raw, err)
		}
		objs = append(objs, u)
	}
	return objs, nil
}
