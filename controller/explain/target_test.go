package explain

import (
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/controller/workload"
)

func TestParseTargetTakesKubectlSpellings(t *testing.T) {
	for in, want := range map[string]workload.Kind{
		"deployment/web": workload.Deployment, "deploy/web": workload.Deployment, "Deployment/web": workload.Deployment,
		"deployments.apps/web": workload.Deployment, "sts/web": workload.StatefulSet, "ds/web": workload.DaemonSet,
		"cronjob/web": workload.CronJob, "job/web": workload.Job, "rollout/web": workload.Rollout, "dc/web": workload.DeploymentConfig,
	} {
		k, name, err := ParseTarget(in)
		if err != nil || k != want || name != "web" {
			t.Errorf("ParseTarget(%q) = %s, %q, %v; want %s web", in, k, name, err, want)
		}
	}
}

func TestParseTargetNamesWhatIsWrong(t *testing.T) {
	for in, want := range map[string]string{
		"web":              "want KIND/NAME",
		"/web":             "want KIND/NAME",
		"deployment/":      "want KIND/NAME",
		"pod/web":          `"pod" is not a kind`,
		"deployment/Web_1": "invalid name",
	} {
		if _, _, err := ParseTarget(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseTarget(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"deployment/web", "sts/a.b", "x/y/z", "", "/", "deployments.apps/web"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, name, err := ParseTarget(s)
		if err != nil {
			return
		}
		if k == "" || name == "" || strings.Contains(name, "/") {
			t.Fatalf("ParseTarget(%q) accepted kind %q name %q", s, k, name)
		}
	})
}
