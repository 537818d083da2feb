package decide

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/controller/workload"
)

// Approval is how a workload's due reloads are applied: at once, after a
// person approves each change, or never (announced only). It is set per
// workload by the approval annotation, else by --reload-approval.
type Approval string

const (
	// ApprovalNone applies a due reload at once (the original's behaviour).
	ApprovalNone Approval = "none"
	// ApprovalRequired holds a due reload until the workload's approve
	// annotation names its change (ChangeID).
	ApprovalRequired Approval = "required"
	// ApprovalNotifyOnly announces a due change (Event, metric, alert, audit
	// line) and records it as handled; it never rolls the workload.
	ApprovalNotifyOnly Approval = "notify-only"
)

// ParseApproval parses a mode; "" is ApprovalNone.
func ParseApproval(s string) (Approval, error) {
	switch a := Approval(strings.TrimSpace(s)); a {
	case "", ApprovalNone:
		return ApprovalNone, nil
	case ApprovalRequired, ApprovalNotifyOnly:
		return a, nil
	}
	return ApprovalRequired, fmt.Errorf("%q is not an approval mode: want %s, %s or %s", s, ApprovalRequired, ApprovalNotifyOnly, ApprovalNone)
}

// changeIDPrefix starts every change identifier, so one reads as such in an
// annotation or an Event.
const changeIDPrefix = "r-"

// ChangeID identifies one due change of a workload: the workload and, for
// each resource to reload, its name and new hash. It is a digest of what the
// decision already knows, so every replica and every restart derives the
// same identifier for the same change, and a newer version of any resource
// makes a new one: the approval of the older change no longer matches. It
// carries no more of a resource's content than the hash does.
func ChangeID(key workload.Key, reloads []Reload) string {
	parts := make([]string, 0, len(reloads))
	for _, rl := range reloads {
		parts = append(parts, rl.String()+"\x00"+rl.Change.String()+"\x00"+rl.Hash)
	}
	sort.Strings(parts)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", key.Kind, key.Namespace, key.Name)
	for _, p := range parts {
		fmt.Fprintf(h, "%s\x00", p)
	}
	return changeIDPrefix + hex.EncodeToString(h.Sum(nil))[:16]
}

// approval sets out's approval mode, where it was set, the due change's
// identifier and whether the workload's approve annotation names it. A mode
// that does not parse requires approval (fail closed: a typo must not roll
// unapproved) and is a problem.
func (d *decider) approval(out *Decision) {
	mode, from := d.o.Approval, "--reload-approval"
	if value, on, ok := d.o.Names.ApprovalFor(d.w); ok {
		from = d.o.Names.Approval + " on the " + on
		a, err := ParseApproval(value)
		if err != nil {
			out.Problems = append(out.Problems, fmt.Sprintf("%s: %v; reloads wait for approval until it is fixed", from, err))
		}
		mode = a
	}
	if mode == "" {
		mode = ApprovalNone
	}
	out.Approval, out.ApprovalFrom = mode, from
	if len(out.Reloads) == 0 || mode == ApprovalNone {
		return
	}
	out.ChangeID = ChangeID(d.v.Key(), out.Reloads)
	out.ApprovedAs = d.w.Meta[d.o.Names.Approve]
	out.Approved = mode == ApprovalRequired && out.ApprovedAs == out.ChangeID
}

// Approver is the write that set an annotation, from the object's
// managedFields: its field manager, operation and time.
type Approver struct {
	Manager   string
	Operation string
	Time      time.Time
}

// ApproverOf returns the newest managedFields entry of obj that owns the
// metadata annotation key, nil when none does (an object read from a cache
// whose managedFields were dropped, or an annotation no manager owns).
func ApproverOf(obj metav1.Object, key string) *Approver {
	var out *Approver
	for _, e := range obj.GetManagedFields() {
		if e.FieldsV1 == nil || !ownsAnnotation(e.FieldsV1.GetRawBytes(), key) {
			continue
		}
		var at time.Time
		if e.Time != nil {
			at = e.Time.Time
		}
		if out == nil || at.After(out.Time) {
			out = &Approver{Manager: e.Manager, Operation: string(e.Operation), Time: at}
		}
	}
	return out
}

// ownsAnnotation reports whether a managedFields entry's field set holds
// metadata.annotations[key].
func ownsAnnotation(raw []byte, key string) bool {
	var set struct {
		Metadata struct {
			Annotations map[string]json.RawMessage `json:"f:annotations"`
		} `json:"f:metadata"`
	}
	if json.Unmarshal(raw, &set) != nil {
		return false
	}
	_, ok := set.Metadata.Annotations["f:"+key]
	return ok
}
