package explain

import (
	"fmt"
	"strings"

	"github.com/reloader-dev/reloader/controller"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/workload"
)

// approvalHolds says whether a person holds the due reloads: a change
// waiting for approval (and how to give it), or a notify-only workload,
// which the controller never reloads.
func approvalHolds(co controller.Options, v workload.View, d decide.Decision) []string {
	if len(d.Reloads) == 0 || d.ChangeID == "" {
		return nil
	}
	key := v.Key()
	switch {
	case d.Approval == decide.ApprovalNotifyOnly:
		return []string{fmt.Sprintf("notify-only (%s): the controller announces change %s and never reloads", d.ApprovalFrom, d.ChangeID)}
	case d.Approval == decide.ApprovalRequired && !d.Approved:
		s := fmt.Sprintf("waiting for approval of change %s (%s): to approve, kubectl annotate %s/%s -n %s %s=%s --overwrite",
			d.ChangeID, d.ApprovalFrom, strings.ToLower(string(key.Kind)), key.Name, key.Namespace, co.Options.WithDefaults().Names.Approve, d.ChangeID)
		if d.ApprovedAs != "" {
			s += fmt.Sprintf(" (its %s=%s names an earlier change)", co.Options.WithDefaults().Names.Approve, d.ApprovedAs)
		}
		return []string{s}
	}
	return nil
}
