package app

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// leaseFence keeps an HA replica from writing when it cannot know it still
// leads. client-go's elector tells a leader it lost the lease only when a
// renewal fails, and a process frozen past its lease (a long GC pause, a
// node freeze, SIGSTOP) runs its workers again before that: in the window
// it writes decisions made from its older caches while another replica
// already leads. So every write first asks check, which measures on this
// process's monotonic clock how long ago the last successful renewal
// started; past the renew deadline the write is held until the next renewal
// succeeds (or the elector gives up and the process exits).
//
// The monotonic clock is what counts: it stops with the process, so a
// frozen replica's last renewal looks as old as it really is once thawed,
// whatever the wall clock did. The record's monotonic order (decide's
// versions) closes what remains: a write already in flight when the
// process froze.
type leaseFence struct {
	resourcelock.Interface
	deadline time.Duration
	now      func() time.Time

	mu      sync.Mutex
	renewed time.Time // start of the last successful Create or Update
}

// haLock is the Lease the HA replicas elect a leader with, fencing this
// replica's writes; nil without HA.
func haLock(o *Options, r *Resolved, cs kubernetes.Interface) (*leaseFence, error) {
	if !o.EnableHA {
		return nil, nil
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, r.PodNS, o.HALockName,
		cs.CoreV1(), cs.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: r.PodName})
	if err != nil {
		return nil, fmt.Errorf("creating the leader election lock %s/%s: %w", r.PodNS, o.HALockName, err)
	}
	return newLeaseFence(lock, o.HARenewDeadline, time.Now), nil
}

func newLeaseFence(lock resourcelock.Interface, deadline time.Duration, now func() time.Time) *leaseFence {
	return &leaseFence{Interface: lock, deadline: deadline, now: now}
}

// Create and Update are how the elector takes and renews the lease: taken
// with our identity, the lease is ours for its duration from when the
// request started at the latest.
func (f *leaseFence) Create(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	return f.renew(r, func() error { return f.Interface.Create(ctx, r) })
}

func (f *leaseFence) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	return f.renew(r, func() error { return f.Interface.Update(ctx, r) })
}

func (f *leaseFence) renew(r resourcelock.LeaderElectionRecord, write func() error) error {
	start := f.now()
	if err := write(); err != nil {
		return err
	}
	if r.HolderIdentity == f.Identity() {
		f.mu.Lock()
		f.renewed = start
		f.mu.Unlock()
	}
	return nil
}

// check is controller.Options.Fence: nil while the last renewal is younger
// than the renew deadline.
func (f *leaseFence) check() error {
	f.mu.Lock()
	renewed := f.renewed
	f.mu.Unlock()
	if renewed.IsZero() {
		return fmt.Errorf("holding writes: lease %s not held yet", f.Describe())
	}
	if age := f.now().Sub(renewed); age >= f.deadline {
		return fmt.Errorf("holding writes: lease %s last renewed %s ago, past the renew deadline %s; this replica may no longer lead",
			f.Describe(), age.Round(time.Millisecond), f.deadline)
	}
	return nil
}
