package controller

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/workload"
)

// ReasonOutsideChangeWindow: due reloads wait for the workload's change
// window to open.
const ReasonOutsideChangeWindow = "OutsideChangeWindow"

// outsideWindow tells, once per change, that v's due reloads wait for its
// change window: an Event with the time it opens, the metric, the audit
// line. The sync is requeued for that time; the window opening is what
// applies them, so nothing is stored.
func (c *Controller) outsideWindow(v workload.View, d decide.Decision) {
	key := v.Key()
	opens := c.o.Now().Add(d.WindowOpensIn).UTC().Truncate(time.Second)
	c.auditDeferred(v, d.Reloads, "change-window")
	if !c.keys.onTold(key, noticeOutsideWindow, d.NextRecord) {
		return
	}
	c.o.Metrics.WindowDeferred.Inc()
	c.o.Recorder.Eventf(eventObject(v), corev1.EventTypeNormal, ReasonOutsideChangeWindow,
		"Reload of %s '%s' in namespace '%s' for %s waits for its change window (%s, %s): applied when it opens at %s",
		v.Kind, key.Name, key.Namespace, describe(d.Applied), d.WindowSpec, d.WindowFrom, opens.Format(time.RFC3339))
	c.o.Logger.Info("reload waits for its change window", "workload", key.String(), "window", d.WindowSpec, "opens", opens.Format(time.RFC3339))
}
