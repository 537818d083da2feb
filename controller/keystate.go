package controller

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/workload"
)

// keyState is everything the controller remembers about one workload key
// between syncs. All of it lives and dies together, changed only by the
// named transitions of keyStates, so no return path of a sync can forget
// one field (a stuck gauge, a stale birth) while clearing another.
type keyState struct {
	// enqueuedAt is when the first event since the last finished sync came
	// (reloader_action_latency_seconds).
	enqueuedAt time.Time
	// queuedAt is when the key entered the queue: the first add since a
	// worker last took it. The worker takes it, so it never outlives the
	// wait it measures (reloader_workqueue_latency_seconds).
	queuedAt time.Time
	// born is, for a workload whose creation the watch delivered (not the
	// initial list), the first version's identity: the point its first sync
	// compares resources' last writes with (decide/firstsight.go). Kept until the
	// workload is adopted.
	born *decide.Birth
	// delivered is the UID whose Add the workload handler has run. An object
	// enters the informer's index before its handler runs, so a ConfigMap
	// event can enqueue a workload whose Add (and birth) is still on its way;
	// its sync waits for the Add.
	delivered types.UID
	// pendingRecord is the adoption record decided and waiting for its
	// write slot (adoption.go); decisions read it as the record meanwhile.
	pendingRecord *pendingRecord
}

func (s *keyState) empty() bool {
	return s.enqueuedAt.IsZero() && s.queuedAt.IsZero() && s.born == nil && s.delivered == "" && s.pendingRecord == nil
}

// keyStates holds the keyState of every key under one lock. The zero value
// is ready to use.
type keyStates struct {
	mu sync.Mutex
	m  map[workload.Key]*keyState
}

// with runs f on key's state, creating it, and drops the state once empty.
func (k *keyStates) with(key workload.Key, f func(*keyState)) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[workload.Key]*keyState{}
	}
	s, ok := k.m[key]
	if !ok {
		s = &keyState{}
	}
	f(s)
	if s.empty() {
		delete(k.m, key)
	} else {
		k.m[key] = s
	}
}

// read returns a copy of key's state (the zero state when none).
func (k *keyStates) read(key workload.Key) keyState {
	k.mu.Lock()
	defer k.mu.Unlock()
	if s, ok := k.m[key]; ok {
		return *s
	}
	return keyState{}
}

// onEvent: an event concerns key and it is about to be queued.
func (k *keyStates) onEvent(key workload.Key, now time.Time) {
	k.with(key, func(s *keyState) {
		if s.enqueuedAt.IsZero() {
			s.enqueuedAt = now
		}
		if s.queuedAt.IsZero() {
			s.queuedAt = now
		}
	})
}

// onAdd: the workload handler ran the Add of incarnation uid; b is its birth
// when the watch delivered its creation (nil for the initial list). It must
// precede the onEvent of the enqueue it asks for, so that sync finds it.
func (k *keyStates) onAdd(key workload.Key, uid types.UID, b *decide.Birth) {
	k.with(key, func(s *keyState) {
		if b != nil {
			s.born = b
		}
		s.delivered = uid
	})
}

// onTaken: a worker took key from the queue; it returns when the key entered
// it.
func (k *keyStates) onTaken(key workload.Key) (queued time.Time, ok bool) {
	k.with(key, func(s *keyState) {
		queued, ok = s.queuedAt, !s.queuedAt.IsZero()
		s.queuedAt = time.Time{}
	})
	return queued, ok
}

// onSynced: a sync of key returned r and err. An adopted workload no longer
// needs its birth; a sync that finished (no error, nothing deferred) has
// handled every pending event.
func (k *keyStates) onSynced(key workload.Key, r result, err error) {
	k.with(key, func(s *keyState) {
		if r.adopted {
			s.born = nil
		}
		if err == nil && r.finished() {
			s.enqueuedAt = time.Time{}
		}
	})
}

// onDeleted: the workload incarnation uid was deleted. The delivered mark
// goes only if it is that incarnation's: a recreated workload's Add may
// already have run.
func (k *keyStates) onDeleted(key workload.Key, uid types.UID) {
	k.with(key, func(s *keyState) {
		delivered := s.delivered
		*s = keyState{}
		if delivered != uid {
			s.delivered = delivered
		}
	})
}

// result is what one sync tells processNext beyond its error, in the shape
// of controller-runtime's reconcile.Result.
type result struct {
	// reloaded: the sync rolled its workload (or sent its webhook).
	reloaded bool
	// requeueAfter, when positive, asks for another sync after that long
	// (storm control, a running pause period).
	requeueAfter time.Duration
	// waiting: the sync decided nothing yet (the workload's Add is still on
	// its way); its events are still pending.
	waiting bool
	// adopted: the workload no longer needs its birth (it has a record, or
	// it is out of scope: annotated later, it is adopted, not judged).
	adopted bool
	// recordAfter, when positive, brings the key back in the background
	// lane when its adoption write may go (adoption.go). The sync handled
	// its events: the pending record stands for the write meanwhile.
	recordAfter time.Duration
}

// finished reports whether the sync handled the events it was for.
func (r result) finished() bool { return !r.waiting && r.requeueAfter <= 0 }

// delivered reports whether the workload handler has run the Add of the
// incarnation v (same UID) the index holds. An object enters the
// informer's index before its handler runs, so a ConfigMap event can
// enqueue a workload whose Add (and birth) is still on its way.
func (k *keyStates) delivered(key workload.Key, v workload.View) bool {
	uid := k.read(key).delivered
	return uid != "" && uid == v.Object.GetUID()
}

// birth is the workload's creation as the watch delivered it
// (decide.Reader.Birth).
func (k *keyStates) birth(key workload.Key) (decide.Birth, bool) {
	if b := k.read(key).born; b != nil {
		return *b, true
	}
	return decide.Birth{}, false
}
