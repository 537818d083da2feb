package decide

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/controller/workload"
)

// The first-sight rule: a resource's content counts as changed since the
// workload's creation only when its last write is later: by resourceVersion
// order, or by a managedFields time in a later second.
func TestSinceCreation(t *testing.T) {
	created := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1", CreationTimestamp: metav1.NewTime(created)}}
	v, err := workload.ViewOf(d)
	if err != nil {
		t.Fatal(err)
	}
	at := func(s int) time.Time { return created.Add(time.Duration(s) * time.Second) }
	cases := []struct {
		name                 string
		birth                *Birth
		written, resCreated  time.Time
		rv                   string
		wantWritten, wantNew bool
	}{
		{name: "not seen being created: adopted", written: at(5), resCreated: at(-10), rv: "900"},
		{name: "seen being created, other incarnation: adopted", birth: &Birth{UID: "old", ResourceVersion: "100"}, written: at(5), resCreated: at(-10), rv: "900"},
		{name: "written a later second", birth: &Birth{UID: "u1", ResourceVersion: "100"}, written: at(1), resCreated: at(-10), rv: "90", wantWritten: true},
		{name: "written an earlier second, earlier resourceVersion", birth: &Birth{UID: "u1", ResourceVersion: "100"}, written: at(-1), resCreated: at(-10), rv: "90"},
		// A managedFields time is not bumped by every write: the resourceVersion decides.
		{name: "managedFields time an earlier second, later resourceVersion", birth: &Birth{UID: "u1", ResourceVersion: "100"}, written: at(-1), resCreated: at(-10), rv: "900", wantWritten: true},
		{name: "same second, later resourceVersion", birth: &Birth{UID: "u1", ResourceVersion: "100"}, written: at(0), resCreated: at(-10), rv: "101", wantWritten: true},
		{name: "same second, earlier resourceVersion", birth: &Birth{UID: "u1", ResourceVersion: "100"}, written: at(0), resCreated: at(-10), rv: "99"},
		{name: "same second, unreadable resourceVersion", birth: &Birth{UID: "u1", ResourceVersion: "100"}, written: at(0), resCreated: at(-10), rv: "x"},
		{name: "created a later second", birth: &Birth{UID: "u1", ResourceVersion: "100"}, written: at(2), resCreated: at(2), rv: "300", wantWritten: true, wantNew: true},
		{name: "created the same second: taken as existing", birth: &Birth{UID: "u1", ResourceVersion: "100"}, written: at(0), resCreated: at(0), rv: "101", wantWritten: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &testReader{births: map[workload.Key]Birth{}}
			if tc.birth != nil {
				r.births[v.Key()] = *tc.birth
			}
			d := &decider{v: v, r: r}
			w, n := d.sinceCreation(Watched{Hash: "h", ResourceVersion: tc.rv, Written: tc.written, Created: tc.resCreated})
			if w != tc.wantWritten || n != tc.wantNew {
				t.Fatalf("written after creation %v, created after it %v; want %v, %v", w, n, tc.wantWritten, tc.wantNew)
			}
		})
	}
}
