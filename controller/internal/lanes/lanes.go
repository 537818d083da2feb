// Package lanes is the order in which the controller's workqueue hands out
// workload keys: a change to something a workload uses goes ahead of
// background work (the adoption of every workload at start-up, retries), so
// a Secret rotated while 2,000 workloads are being adopted is applied in
// the next free worker, not after them.
//
// It plugs into client-go's workqueue as its Queue, so the workqueue keeps
// what it is trusted for: one copy of a key, never two workers on one key,
// rate-limited retries, delays. Only the order changes.
package lanes

import "sync"

// DefaultBurst is how many urgent keys may be handed out in a row while
// background keys wait. A steady stream of changes then still lets adoption
// finish (it gets one worker slot in Burst+1), so a workload adopted late is
// never starved.
const DefaultBurst = 8

// Queue is a two-lane FIFO implementing client-go's workqueue.Queue. Push,
// Pop, Touch and Len are called by the workqueue under its own lock; Urgent
// is called by the controller before it adds a key, so Queue keeps a lock
// of its own for the marks.
type Queue[T comparable] struct {
	burst int

	mu sync.Mutex
	// marked are keys whose next hand-out is urgent.
	marked map[T]struct{}
	// urgent and background hold the waiting keys, oldest first. A key
	// promoted from background stays there as a stale entry, skipped when
	// reached (inUrgent says where the key really waits).
	urgent, background []T
	inUrgent           map[T]bool
	// run counts urgent keys handed out since the last background one.
	run int
}

// New returns an empty queue. burst <= 0 means DefaultBurst.
func New[T comparable](burst int) *Queue[T] {
	if burst <= 0 {
		burst = DefaultBurst
	}
	return &Queue[T]{burst: burst, marked: map[T]struct{}{}, inUrgent: map[T]bool{}}
}

// Urgent marks item so that its next hand-out goes ahead of background work.
// Call it before adding item to the workqueue: if item already waits in the
// background lane, the workqueue's Touch moves it; if it is being processed,
// the workqueue pushes it again when done, into the urgent lane.
func (q *Queue[T]) Urgent(item T) {
	q.mu.Lock()
	q.marked[item] = struct{}{}
	q.mu.Unlock()
}

// Push adds a key that is not waiting yet.
func (q *Queue[T]) Push(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	_, urgent := q.marked[item]
	q.inUrgent[item] = urgent
	if urgent {
		q.urgent = append(q.urgent, item)
	} else {
		q.background = append(q.background, item)
	}
}

// Touch is a key added again while it waits: promoted if marked since.
func (q *Queue[T]) Touch(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, urgent := q.marked[item]; urgent && !q.inUrgent[item] {
		q.inUrgent[item] = true
		q.urgent = append(q.urgent, item)
	}
}

// Len is the number of keys waiting (a promoted key counts once).
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.inUrgent)
}

// Pop hands out the next key. The workqueue calls it only when Len > 0.
func (q *Queue[T]) Pop() T {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.dropStale()
	var item T
	switch {
	case len(q.urgent) > 0 && (q.run < q.burst || len(q.background) == 0):
		item, q.urgent = q.urgent[0], q.urgent[1:]
		q.run++
	case len(q.background) > 0:
		item, q.background = q.background[0], q.background[1:]
		q.run = 0
	default:
		var zero T
		return zero
	}
	delete(q.inUrgent, item)
	delete(q.marked, item)
	return item
}

// dropStale removes promoted keys from the head of the background lane, so
// that its length says whether background work really waits.
func (q *Queue[T]) dropStale() {
	for len(q.background) > 0 {
		if u, waiting := q.inUrgent[q.background[0]]; waiting && !u {
			return
		}
		var zero T
		q.background[0] = zero
		q.background = q.background[1:]
	}
}
