package tools

import (
	"context"
	"time"
)

// deadliner is what *testing.T offers: the test binary's -timeout.
type deadliner interface {
	Deadline() (time.Time, bool)
}

// BuildContext is the context of a test that compiles from source (a
// release of the controller for each platform, a FIPS build): it ends a
// minute before the test binary's -timeout rather than after a fixed span.
// On an empty build cache those compiles are many times slower than on a
// warm one (the release build's flags and platforms share no compile with
// the test binary), and a fixed span that fits the warm case failed the
// cold one though nothing was wrong. Without a -timeout it never ends.
func BuildContext(t deadliner) (context.Context, context.CancelFunc) {
	deadline, ok := t.Deadline()
	if !ok {
		return context.WithCancel(context.Background())
	}
	return context.WithDeadline(context.Background(), deadline.Add(-time.Minute))
}
