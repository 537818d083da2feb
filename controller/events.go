package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"

	"github.com/reloader-dev/reloader/controller/busy"
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

// eventObject returns the typed object for the event recorder.
func eventObject(v workload.View) runtime.Object {
	// Every kind's object, the custom ones included, is a runtime.Object.
	o, _ := v.Object.(runtime.Object)
	return o
}

// EventSink is sink with its writes held while reloads are being written
// (busy.Tracker): an Event is a write the apiserver shares with the reloads,
// and it says what already happened, so it can land a moment later. Give it
// to the Event broadcaster's StartRecordingToSink.
func (c *Controller) EventSink(ctx context.Context, sink record.EventSink) record.EventSink {
	return heldSink{ctx: ctx, sink: sink, busy: c.busy}
}

type heldSink struct {
	// ctx is the controller's: the broadcaster's sink interface has none.
	ctx  context.Context
	sink record.EventSink
	busy *busy.Tracker
}

// The wait's error is dropped on purpose: a stopping controller still sends
// the Events it holds.
func (s heldSink) Create(e *corev1.Event) (*corev1.Event, error) {
	_ = s.busy.Wait(s.ctx)
	return s.sink.Create(e)
}

func (s heldSink) Update(e *corev1.Event) (*corev1.Event, error) {
	_ = s.busy.Wait(s.ctx)
	return s.sink.Update(e)
}

func (s heldSink) Patch(old *corev1.Event, data []byte) (*corev1.Event, error) {
	_ = s.busy.Wait(s.ctx)
	return s.sink.Patch(old, data)
}
