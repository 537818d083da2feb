package decide

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/workload"
)

// The watchdog dates a pause without paused-at by the managedFields entry
// owning spec.paused: it reports it once the pause period has passed since
// that write, resumes it only when that manager is the controller's, and
// says nothing about a pause it cannot date or a workload without a period.
func TestPauseWatchdogDatesAPauseByWhoOwnsSpecPaused(t *testing.T) {
	r := &testReader{states: map[Resource]State{appCM: existing("c1"), creds: existing("s1")}}
	pausedBy := func(manager string, at time.Time, kv ...string) workload.View {
		v := deployment(t, with(append([]string{names.Auto, "true", annotations.Applied, recorded}, kv...)...))
		d := v.Object.(*appsv1.Deployment)
		d.Spec.Paused = true
		mt := metav1.NewTime(at)
		d.ManagedFields = []metav1.ManagedFieldsEntry{
			{Manager: "creator", Operation: metav1.ManagedFieldsOperationUpdate, Time: &mt, FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{}}}`)},
			{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Time: &mt, FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:paused":{}}}`)},
		}
		return v
	}
	for name, tc := range map[string]struct {
		v                       workload.View
		want, outlived, resumed bool
	}{
		"a person's pause, within the period": {v: pausedBy("oncall", now.Add(-time.Minute), names.PausePeriod, "5m"), want: true},
		"a person's pause, outlived":          {v: pausedBy("oncall", now.Add(-time.Hour), names.PausePeriod, "5m"), want: true, outlived: true},
		"ours, paused-at lost, outlived":      {v: pausedBy("reloader", now.Add(-time.Hour), names.PausePeriod, "5m"), want: true, outlived: true, resumed: true},
		"no pause period":                     {v: pausedBy("oncall", now.Add(-time.Hour))},
		"paused-at present: pause() decides": {v: pausedBy("reloader", now.Add(-time.Hour), names.PausePeriod, "5m",
			names.PausedAt, now.Add(-time.Minute).Format(time.RFC3339))},
	} {
		d := Decide(Options{}, tc.v, r, now)
		w := d.PauseWatch
		if (w != nil) != tc.want {
			t.Errorf("%s: watch %+v, want one: %v", name, w, tc.want)
			continue
		}
		if w == nil {
			continue
		}
		if w.Outlived != tc.outlived || (d.Resume != nil) != tc.resumed {
			t.Errorf("%s: outlived %v, resume %+v; want outlived %v, resumed %v", name, w.Outlived, d.Resume, tc.outlived, tc.resumed)
		}
		if !w.Outlived && w.In != 4*time.Minute {
			t.Errorf("%s: outlived in %s, want 4m", name, w.In)
		}
	}
}
