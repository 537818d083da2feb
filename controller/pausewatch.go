package controller

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/workload"
)

// ReasonPauseOutlived: a pause without paused-at lasted longer than the
// workload's pause period.
const ReasonPauseOutlived = "PauseOutlived"

// watchPause reports an outlived pause once: a Warning Event and
// reloader_pause_outlived_total. The sync resumes it when it is ours
// (decide sets Resume); a person's pause is only reported.
func (c *Controller) watchPause(v workload.View, w *decide.PauseWatch) {
	if !w.Outlived {
		return
	}
	key := v.Key()
	if !c.keys.onTold(key, noticePauseOutlived, w.Manager+"@"+w.Since.UTC().Format(time.RFC3339)) {
		return
	}
	what := "left paused: it is not this controller's pause (kubectl rollout resume ends it)"
	if w.Ours {
		what = "resumed: the pause is this controller's and its paused-at annotation was lost"
	}
	c.o.Metrics.PauseOutlived.WithLabelValues(strconv.FormatBool(w.Ours)).Inc()
	msg := fmt.Sprintf("%s '%s' in namespace '%s' has been paused since %s (spec.paused last written by %s), longer than its pause period %s; %s",
		v.Kind, key.Name, key.Namespace, w.Since.UTC().Format(time.RFC3339), w.Manager, w.Period, what)
	c.o.Recorder.Event(eventObject(v), corev1.EventTypeWarning, ReasonPauseOutlived, msg)
	c.o.Logger.Warn("pause outlived its period", "workload", key.String(), "manager", w.Manager,
		"since", w.Since.UTC().Format(time.RFC3339), "period", w.Period.String(), "resumed", w.Ours)
}
