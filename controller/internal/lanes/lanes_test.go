package lanes_test

import (
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/reloader-dev/reloader/controller/internal/lanes"
)

// newWorkqueue is the queue the controller builds: client-go's rate-limited
// workqueue over lanes.
func newWorkqueue(burst int) (workqueue.TypedRateLimitingInterface[string], *lanes.Queue[string]) {
	l := lanes.New[string](burst)
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{
			DelayingQueue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{
				Queue: workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Queue: l}),
			}),
		})
	return q, l
}

func take(t *testing.T, q workqueue.TypedRateLimitingInterface[string], n int) []string {
	t.Helper()
	var out []string
	for range n {
		k, shutdown := q.Get()
		if shutdown {
			t.Fatal("queue shut down")
		}
		out = append(out, k)
		q.Done(k)
	}
	return out
}

func TestAChangeGoesAheadOfStartupWork(t *testing.T) {
	q, l := newWorkqueue(8)
	defer q.ShutDown()
	for _, k := range []string{"adopt-1", "adopt-2", "adopt-3"} {
		q.Add(k)
	}
	l.Urgent("changed")
	q.Add("changed")
	got := take(t, q, 4)
	want := []string{"changed", "adopt-1", "adopt-2", "adopt-3"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}

func TestAWaitingKeyIsPromotedNotDuplicated(t *testing.T) {
	q, l := newWorkqueue(8)
	defer q.ShutDown()
	q.Add("a")
	q.Add("b")
	l.Urgent("b")
	q.Add("b")
	if q.Len() != 2 {
		t.Fatalf("Len %d after promoting a waiting key, want 2", q.Len())
	}
	if got := take(t, q, 2); got[0] != "b" || got[1] != "a" {
		t.Fatalf("order %v, want [b a]", got)
	}
	if q.Len() != 0 {
		t.Fatalf("Len %d after taking both, want 0 (no stale copy handed out)", q.Len())
	}
}

func TestAChangeToAKeyInProgressIsUrgentWhenItReturns(t *testing.T) {
	q, l := newWorkqueue(8)
	defer q.ShutDown()
	q.Add("busy")
	k, _ := q.Get()
	q.Add("adopt")
	l.Urgent("busy")
	q.Add("busy") // while processing: pushed again on Done
	q.Done(k)
	if got := take(t, q, 2); got[0] != "busy" {
		t.Fatalf("order %v, want the changed key first", got)
	}
}

func TestBackgroundWorkIsNeverStarved(t *testing.T) {
	q, l := newWorkqueue(2)
	defer q.ShutDown()
	q.Add("adopt")
	for _, k := range []string{"c1", "c2", "c3", "c4"} {
		l.Urgent(k)
		q.Add(k)
	}
	got := take(t, q, 5)
	if got[2] != "adopt" {
		t.Fatalf("order %v: after a burst of 2 changes the waiting background key goes next", got)
	}
}

func TestRetriesAndDelaysKeepTheirLane(t *testing.T) {
	q, l := newWorkqueue(8)
	defer q.ShutDown()
	q.AddAfter("retry", time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	l.Urgent("changed")
	q.Add("changed")
	deadline := time.Now().Add(2 * time.Second)
	for q.Len() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := take(t, q, 2); got[0] != "changed" {
		t.Fatalf("order %v, want the change ahead of the delayed retry", got)
	}
}

// Whatever mix of plain and urgent adds, every waiting key is handed out
// exactly once, as the plain workqueue does.
func TestEveryKeyHandedOutOnce(t *testing.T) {
	q, l := newWorkqueue(3)
	defer q.ShutDown()
	keys := []string{"a", "b", "c", "d", "e", "f"}
	for round := range 200 {
		waiting := map[string]bool{}
		for i := range 10 {
			k := keys[(round*7+i*3)%len(keys)]
			if (round+i)%3 == 0 {
				l.Urgent(k)
			}
			q.Add(k)
			waiting[k] = true
		}
		if q.Len() != len(waiting) {
			t.Fatalf("round %d: Len %d, want %d", round, q.Len(), len(waiting))
		}
		for _, k := range take(t, q, len(waiting)) {
			if !waiting[k] {
				t.Fatalf("round %d: %q handed out twice or never added", round, k)
			}
			delete(waiting, k)
		}
	}
}
