package app

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// lockStub is a resource lock whose writes succeed or fail as the test says.
type lockStub struct {
	resourcelock.Interface
	fail error
}

func (l *lockStub) Create(context.Context, resourcelock.LeaderElectionRecord) error { return l.fail }
func (l *lockStub) Update(context.Context, resourcelock.LeaderElectionRecord) error { return l.fail }
func (l *lockStub) Identity() string                                                { return "replica-a" }
func (l *lockStub) Describe() string                                                { return "ns/lock" }

// An HA replica writes only while its last successful renewal is younger
// than the renew deadline, on its own monotonic clock: a replica frozen past
// it (SIGSTOP, a GC stall, a node freeze) writes nothing once thawed until it
// has renewed again.
func TestTheLeaseFenceHoldsWritesOfAReplicaThatMayNoLongerLead(t *testing.T) {
	clock := time.Unix(1000, 0)
	now := func() time.Time { return clock }
	lock := &lockStub{}
	f := newLeaseFence(lock, 10*time.Second, now)
	ours := resourcelock.LeaderElectionRecord{HolderIdentity: "replica-a"}
	ctx := context.Background()

	if err := f.check(); err == nil || !strings.Contains(err.Error(), "not held yet") {
		t.Fatalf("before the lease is taken: %v, want writes held", err)
	}
	if err := f.Create(ctx, ours); err != nil {
		t.Fatal(err)
	}
	if err := f.check(); err != nil {
		t.Fatalf("just took the lease: %v", err)
	}
	clock = clock.Add(9 * time.Second)
	if err := f.check(); err != nil {
		t.Fatalf("9s after renewal, deadline 10s: %v", err)
	}
	clock = clock.Add(30 * time.Second) // frozen, then thawed
	err := f.check()
	if err == nil || !strings.Contains(err.Error(), "past the renew deadline") {
		t.Fatalf("39s after renewal: %v, want writes held naming the deadline", err)
	}

	// A failed renewal does not reopen the fence.
	lock.fail = errors.New("lease held by replica-b")
	if err := f.Update(ctx, ours); err == nil {
		t.Fatal("the failing renewal must be returned to the elector")
	}
	if f.check() == nil {
		t.Fatal("a failed renewal reopened the fence")
	}
	// Releasing the lease (ReleaseOnCancel writes an empty holder) is no
	// renewal either.
	lock.fail = nil
	if err := f.Update(ctx, resourcelock.LeaderElectionRecord{}); err != nil {
		t.Fatal(err)
	}
	if f.check() == nil {
		t.Fatal("releasing the lease reopened the fence")
	}
	// A renewal that succeeds does.
	if err := f.Update(ctx, ours); err != nil {
		t.Fatal(err)
	}
	if err := f.check(); err != nil {
		t.Fatalf("renewed: %v", err)
	}
}

// The renewal counts from when its request started: a renewal that took
// long to answer leaves less of the deadline, never more.
func TestTheLeaseFenceCountsFromTheRenewalsStart(t *testing.T) {
	clock := time.Unix(1000, 0)
	lock := &slowLock{lockStub: lockStub{}, advance: func() { clock = clock.Add(8 * time.Second) }}
	f := newLeaseFence(lock, 10*time.Second, func() time.Time { return clock })
	if err := f.Update(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: "replica-a"}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(3 * time.Second)
	if f.check() == nil {
		t.Fatal("11s after the renewal was sent, deadline 10s: want writes held")
	}
}

type slowLock struct {
	lockStub
	advance func()
}

func (l *slowLock) Update(context.Context, resourcelock.LeaderElectionRecord) error {
	l.advance()
	return nil
}
