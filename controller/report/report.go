// Package report tells what the controller did and why: the Events users
// filter on, the metrics, the audit trail (--audit-log), the log lines and
// the alerts. One Reporter owns all of them, so a reload, a failure, a hold
// or a problem is reported in one place and once: per workload it remembers
// what it last told (problems, held changes, notices) until the workload
// changes or leaves.
//
// It reads nothing of the caches but what Options.Resources answers (who
// changed a resource), and decides nothing.
package report

import (
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"

	"github.com/reloader-dev/reloader/controller/alerts"
	"github.com/reloader-dev/reloader/controller/audit"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/metrics"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// Event reasons the controller records. Users filter on them (kubectl get
// events --field-selector reason=ReloadFail) and the original's tests match
// them, so they are part of the interface.
const (
	// ReasonReloaded: a workload was rolled for the resources named.
	ReasonReloaded = "Reloaded"
	// ReasonReloadFail: a reload failed, or a workload's configuration has a
	// problem (a bad annotation, a missing resource).
	ReasonReloadFail = "ReloadFail"
	// ReasonAPIUnavailable / ReasonAPIAvailable: an optional API asked for
	// (Argo Rollouts, CSI) is not served yet / is now served.
	ReasonAPIUnavailable = "APIUnavailable"
	ReasonAPIAvailable   = "APIAvailable"
	// ReasonRolloutWaiting: a due reload waits for a rollout slot.
	ReasonRolloutWaiting = "RolloutWaiting"
	// ReasonRolloutStalled: a rollout the controller started passed its
	// deadline and gave back its slot (budget.Stall).
	ReasonRolloutStalled = "ReloadRolloutStalled"
	// ReasonOutsideChangeWindow: due reloads wait for the workload's change
	// window to open.
	ReasonOutsideChangeWindow = "OutsideChangeWindow"
	// ReasonPauseOutlived: a pause without paused-at lasted longer than the
	// workload's pause period.
	ReasonPauseOutlived = "PauseOutlived"
)

// Event message formats, in the original's words where it has them.
const (
	// msgReloaded: resources, namespace, workload name, workload kind, namespace.
	msgReloaded = "Changes detected in %s in namespace '%s', Updated '%s' of type '%s' in namespace '%s'"
	// msgReloadFailed: workload kind, name, namespace, resources, error.
	msgReloadFailed = "Reload of %s '%s' in namespace '%s' for %s failed: %v"
	// msgProblems: workload kind, name, namespace, problems.
	msgProblems = "%s '%s' in namespace '%s': %s"
)

// Resources is what a report reads of the caches: who made a resource's
// current version, and its current state.
type Resources interface {
	ChangedBy(kind refs.Kind, ns, name, resourceVersion string) *audit.Writer
	Resource(kind refs.Kind, ns, name string) decide.State
}

// Options are where reports go.
type Options struct {
	Recorder record.EventRecorder
	Metrics  *metrics.Collectors
	Logger   *slog.Logger
	// Audit, when set, gets one line per reload, deferral, skip, webhook
	// delivery and refused write.
	Audit *audit.Logger
	// Notify, when set, is told about every reload (alert sinks); it must
	// not block.
	Notify func(alerts.Event)
	// Self is the object Events about the controller itself go on; nil:
	// such Events are not recorded.
	Self      *corev1.ObjectReference
	Strategy  string
	Resources Resources
	Now       func() time.Time
}

// Reporter reports; it is safe for concurrent use.
type Reporter struct {
	o Options

	mu   sync.Mutex
	told map[workload.Key]map[notice]string
}

// notice is a kind of report told once per occurrence, keyed per workload
// by what identifies the occurrence.
type notice uint8

const (
	noticeProblems      notice = iota // id: the problems' text
	noticePauseOutlived               // id: the pause's manager and time
	noticeOutsideWindow               // id: the record the held reloads would write
	noticeDeferred                    // id: the held changes
	noticeAwaiting                    // id: the change awaiting approval (decide.ChangeID)
	noticeNotified                    // id: the change announced (notify-only)
)

// New returns a Reporter; Recorder, Metrics and Logger are required.
func New(o Options) *Reporter {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Reporter{o: o, told: map[workload.Key]map[notice]string{}}
}

// once records id as key's current n and reports whether it differs from
// what was told before. A first "" is not news (nothing to tell).
func (r *Reporter) once(key workload.Key, n notice, id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.told[key]
	last, had := m[n]
	if had && last == id || !had && id == "" {
		return false
	}
	if m == nil {
		m = map[notice]string{}
		r.told[key] = m
	}
	m[n] = id
	return true
}

func (r *Reporter) clear(key workload.Key, n notice) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.told[key], n)
	if len(r.told[key]) == 0 {
		delete(r.told, key)
	}
}

// Forget drops what was told about key: the workload left, and a new one
// of the same name is told everything afresh.
func (r *Reporter) Forget(key workload.Key) {
	r.ApprovalSettled(key)
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.told, key)
}

// eventObject returns the typed object for the event recorder.
func eventObject(v workload.View) runtime.Object {
	// Every kind's object, the custom ones included, is a runtime.Object.
	o, _ := v.Object.(runtime.Object)
	return o
}
