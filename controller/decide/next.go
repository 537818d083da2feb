package decide

import "time"

// Step is what a sync does with a decision, one of a few cases, in the
// order a sync weighs them: a sync switches on it once.
type Step int

const (
	// Stop: a gate stops the sync before it looks at resources (Gate says
	// which).
	Stop Step = iota
	// Pause: a pause period this controller wrote still runs; come back
	// After.
	Pause
	// Stale: the view is older than what was applied (Stale): write
	// nothing; the newer versions' watch events bring the workload back.
	Stale
	// UpToDate: what the workload runs is current and its record says so.
	UpToDate
	// RecordOnly: write the record alone (a first baseline, a resource no
	// longer watched); it rolls nothing.
	RecordOnly
	// Notify: reloads are due and the workload is notify-only: announce
	// the change and write the record alone; it rolls nothing.
	Notify
	// AwaitApproval: reloads are due and wait for a person to approve the
	// change (ChangeID); nothing is written and nothing is retried: the
	// approving annotation, or a newer change, is an update that brings the
	// workload back.
	AwaitApproval
	// Hold: reloads are due and the decision holds them (HoldReason):
	// storm control and the change window until After, an invalid window
	// until it is fixed (After 0).
	Hold
	// ReloadNow: write Change.
	ReloadNow
)

// Why a decision holds due reloads, as the audit trail names it.
const (
	HoldMinReloadInterval = "min-reload-interval"
	HoldChangeWindow      = "change-window"
	HoldWindowInvalid     = "change-window-invalid"
)

// Next is the verdict of a decision: its Step, when to come back, and why
// a Hold holds.
type Next struct {
	Step       Step
	After      time.Duration
	HoldReason string
}

// Next says what happens next.
func (d Decision) Next() Next {
	switch {
	case d.Gate != GateOpen:
		return Next{Step: Stop}
	case d.PausedFor > 0:
		return Next{Step: Pause, After: d.PausedFor}
	case len(d.Stale) > 0:
		return Next{Step: Stale}
	case len(d.Reloads) == 0 && !d.RecordOnly:
		return Next{Step: UpToDate}
	case len(d.Reloads) == 0:
		return Next{Step: RecordOnly}
	case d.Approval == ApprovalNotifyOnly:
		return Next{Step: Notify}
	case d.Approval == ApprovalRequired && !d.Approved:
		// Before storm control and the window: a person can approve while
		// they hold, and the approved change then waits for them.
		return Next{Step: AwaitApproval}
	case d.HeldFor > 0:
		// Storm control first: the record is left as it is, so the
		// deferred sync still sees the difference and applies the latest
		// state once.
		return Next{Step: Hold, After: d.HeldFor, HoldReason: HoldMinReloadInterval}
	case d.WindowInvalid:
		return Next{Step: Hold, HoldReason: HoldWindowInvalid}
	case d.WindowOpensIn > 0:
		return Next{Step: Hold, After: d.WindowOpensIn, HoldReason: HoldChangeWindow}
	}
	return Next{Step: ReloadNow}
}

// Adopts reports whether a sync that stops at the decision's gate ends the
// workload's first sight: out of scope or not annotated, a workload
// annotated later is adopted, not judged against its creation; a workload
// that cannot be reloaded at all is not.
func (d Decision) Adopts() bool { return d.Gate == GateNamespace || d.Gate == GateNotInterested }
