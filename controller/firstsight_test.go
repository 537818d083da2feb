package controller

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
		birth                *birth
		written, resCreated  time.Time
		rv                   string
		wantWritten, wantNew bool
	}{
		{name: "not seen being created: adopted", written: at(5), resCreated: at(-10), rv: "900"},
		{name: "seen being created, other incarnation: adopted", birth: &birth{uid: "old", resourceVersion: "100"}, written: at(5), resCreated: at(-10), rv: "900"},
		{name: "written a later second", birth: &birth{uid: "u1", resourceVersion: "100"}, written: at(1), resCreated: at(-10), rv: "90", wantWritten: true},
		{name: "written an earlier second, earlier resourceVersion", birth: &birth{uid: "u1", resourceVersion: "100"}, written: at(-1), resCreated: at(-10), rv: "90"},
		// A managedFields time is not bumped by every write: the resourceVersion decides.
		{name: "managedFields time an earlier second, later resourceVersion", birth: &birth{uid: "u1", resourceVersion: "100"}, written: at(-1), resCreated: at(-10), rv: "900", wantWritten: true},
		{name: "same second, later resourceVersion", birth: &birth{uid: "u1", resourceVersion: "100"}, written: at(0), resCreated: at(-10), rv: "101", wantWritten: true},
		{name: "same second, earlier resourceVersion", birth: &birth{uid: "u1", resourceVersion: "100"}, written: at(0), resCreated: at(-10), rv: "99"},
		{name: "same second, unreadable resourceVersion", birth: &birth{uid: "u1", resourceVersion: "100"}, written: at(0), resCreated: at(-10), rv: "x"},
		{name: "created a later second", birth: &birth{uid: "u1", resourceVersion: "100"}, written: at(2), resCreated: at(2), rv: "300", wantWritten: true, wantNew: true},
		{name: "created the same second: taken as existing", birth: &birth{uid: "u1", resourceVersion: "100"}, written: at(0), resCreated: at(0), rv: "101", wantWritten: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &Controller{}
			if tc.birth != nil {
				c.born.Store(v.Key(), *tc.birth)
			}
			w, n := c.sinceCreation(v, watched{hash: "h", resourceVersion: tc.rv, written: tc.written, created: tc.resCreated})
			if w != tc.wantWritten || n != tc.wantNew {
				t.Fatalf("written after creation %v, created after it %v; want %v, %v", w, n, tc.wantWritten, tc.wantNew)
			}
		})
	}
}

func TestLastWriteIsTheNewestManagedFieldsTime(t *testing.T) {
	c := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1, t2 := metav1.NewTime(c.Add(time.Hour)), metav1.NewTime(c.Add(2*time.Hour))
	m := &metav1.ObjectMeta{CreationTimestamp: c, ManagedFields: []metav1.ManagedFieldsEntry{{Time: &t2}, {Time: &t1}, {}}}
	if got := lastWrite(m); !got.Equal(t2.Time) {
		t.Fatalf("lastWrite = %v, want %v", got, t2)
	}
	if got := lastWrite(&metav1.ObjectMeta{CreationTimestamp: c}); !got.Equal(c.Time) {
		t.Fatalf("without managedFields lastWrite = %v, want the creation %v", got, c)
	}
}
