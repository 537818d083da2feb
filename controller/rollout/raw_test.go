package rollout

import (
	"reflect"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/controller/workload"
)

// A reload of a custom kind changes the reload variables and nothing else
// of the raw containers: fields k8s.io/api does not know are kept.
func TestEnvOnRawKeepsEveryOtherField(t *testing.T) {
	containers := []any{
		map[string]any{"name": "side", "futureField": "a"},
		map[string]any{"name": "app", "futureField": map[string]any{"x": int64(1)}, "env": []any{
			map[string]any{"name": "KEEP", "value": "1", "futureEnvField": true},
			map[string]any{"name": "STAKATER_A_CONFIGMAP", "valueFrom": map[string]any{"x": "y"}, "futureEnvField": "kept"},
			map[string]any{"name": "STAKATER_GONE_SECRET", "value": "old"},
		}},
	}
	got, err := envOnRaw(workload.Key{Kind: workload.Rollout, Namespace: "ns", Name: "web"}, containers, []workload.EnvChange{
		{Container: "app", Name: "STAKATER_A_CONFIGMAP", Value: "h1"},
		{Container: "app", Name: "STAKATER_GONE_SECRET", Remove: true},
		{Container: "side", Name: "STAKATER_B_CONFIGMAP", Value: "h2"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{
		map[string]any{"name": "side", "futureField": "a", "env": []any{map[string]any{"name": "STAKATER_B_CONFIGMAP", "value": "h2"}}},
		map[string]any{"name": "app", "futureField": map[string]any{"x": int64(1)}, "env": []any{
			map[string]any{"name": "KEEP", "value": "1", "futureEnvField": true},
			map[string]any{"name": "STAKATER_A_CONFIGMAP", "value": "h1", "futureEnvField": "kept"},
		}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	if _, ok := containers[0].(map[string]any)["env"]; ok {
		t.Fatal("the cached containers were modified")
	}
}

func TestEnvOnRawNamesAMissingContainer(t *testing.T) {
	_, err := envOnRaw(workload.Key{Kind: workload.Rollout, Namespace: "ns", Name: "web"}, []any{map[string]any{"name": "app"}},
		[]workload.EnvChange{{Container: "other", Name: "X", Value: "1"}})
	if err == nil || err.Error() != `Rollout ns/web: no container "other" in spec.template.spec.containers` {
		t.Fatalf("error %v", err)
	}
}

// A record is read from the cluster, where anyone who may create Jobs can
// write one: whatever it holds, reading it returns a Job of the named name
// in the record's namespace, or an error naming the record.
func FuzzRecordedJob(f *testing.F) {
	f.Add("batch", `{"metadata":{"name":"batch","namespace":"ns"}}`)
	f.Add("batch", `{"metadata":{"name":"other","namespace":"ns"}}`)
	f.Add("batch", `{"metadata":{"name":"batch","namespace":"ns","uid":"x"}}`)
	f.Add("", `not json`)
	f.Fuzz(func(t *testing.T, of, body string) {
		rec := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "rec", Namespace: "ns",
			Annotations: map[string]string{RecordOf: of, RecordJob: body}}}
		job, err := RecordedJob(rec)
		if err != nil {
			if !strings.Contains(err.Error(), "ns/rec") {
				t.Fatalf("error %q does not name the record", err)
			}
			return
		}
		if job.Namespace != "ns" || job.Name != of || job.Name == "" || job.UID != "" {
			t.Fatalf("accepted %s/%s (uid %q) from a record of %q", job.Namespace, job.Name, job.UID, of)
		}
	})
}
