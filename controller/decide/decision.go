package decide

import (
	"strings"
	"time"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// Decision is what one sync of a workload decides, and why.
type Decision struct {
	// Gate is the first reason a sync stops before looking at resources
	// (GateOpen when it goes on); Skip names a GateWorkload stop as
	// reloader_skipped_total does ("being_deleted").
	Gate Gate
	Skip string
	// Interested is false when the workload carries no annotation that can
	// make it reload (and --auto-reload-all is off).
	Interested bool
	// PausedFor is how long the pause period of a Deployment this controller
	// paused still runs; Resume, when not nil, is the write that ends a pause
	// whose period is over (or no longer readable).
	PausedFor time.Duration
	Resume    *workload.Change
	// PauseWatch is the pause watchdog's finding on a pause without
	// paused-at (pausewatch.go); nil when there is none to watch. An
	// outlived pause of ours is resumed (Resume).
	PauseWatch *PauseWatch
	// Record is the applied-hashes record (RecordText as written); HasRecord
	// is false when the controller never recorded one.
	Record     map[string]string
	RecordText string
	HasRecord  bool
	// Watched are the resources the workload watches, each with the rule
	// that watches it and the content last applied, sorted.
	Watched []Watched
	// Verdicts say, for each resource the pod spec uses and each it watches
	// by name, whether it is watched and by which rule, sorted.
	Verdicts []Verdict
	// ReadOn says, per resource kind, where the workload's annotations are
	// read: "metadata" or "pod template".
	ReadOn map[refs.Kind]string
	// Marker is the reload marker the template carries.
	Marker Marker
	// Problems are the configuration problems, in the order found; sorted,
	// they are the text of the ReloadFail Event.
	Problems []string
	// Reloads are the changes to apply (sorted); Skips the changes
	// deliberately not applied (reloader_skipped_total).
	Reloads []Reload
	Skips   []Skip
	// NextRecord is the record to write; RecordOnly is true when it must be
	// written without rolling anything (a baseline, a resource no longer
	// watched).
	NextRecord string
	RecordOnly bool
	// NextVersions is the versions annotation written with NextRecord
	// (versions.go); Stale lists the watched resources the view holds at a
	// version older than the one already applied: a stale decision writes
	// nothing and is made again when the caches catch up.
	NextVersions string
	Stale        []StaleView
	// HeldFor is how long storm control (--min-reload-interval) holds the
	// reloads.
	HeldFor time.Duration
	// WindowOpensIn is how long until the workload's change window opens,
	// when the reloads are due outside it (0: open, or none); WindowSpec is
	// the window and WindowFrom where it was set. WindowInvalid: the
	// annotation does not parse, and the reloads wait until it is fixed
	// (fail closed: a typo must not roll outside the window).
	WindowOpensIn time.Duration
	WindowSpec    string
	WindowFrom    string
	WindowInvalid bool
	// Approval is the workload's approval mode and ApprovalFrom where it
	// was set (approval.go). With reloads due and a mode other than none,
	// ChangeID identifies the change, ApprovedAs is the identifier the
	// workload's approve annotation names, and Approved is true when that
	// is ChangeID (required mode).
	Approval     Approval
	ApprovalFrom string
	ChangeID     string
	ApprovedAs   string
	Approved     bool
	// Approver is the write that approved the change, read by the sync
	// from the live workload's managedFields (one GET) before it applies an
	// approved change; nil until then. The decision itself never sets it.
	Approver *Approver
	// Change is the one write carrying the reloads; Applied are the reloads
	// it carries and NoContainer counts those with no container to carry a
	// marker.
	Change      workload.Change
	Applied     []Reload
	NoContainer int
}

// RecordChange is the write of the record alone (and its versions): it rolls
// nothing.
func (d Decision) RecordChange() workload.Change {
	ch := workload.Change{RecordKey: annotations.Applied, Record: d.NextRecord}
	setMeta(&ch, annotations.AppliedVersions, d.NextVersions)
	return ch
}

// Gate is where a sync stops before deciding on resources.
type Gate int

const (
	GateOpen          Gate = iota
	GateWorkload           // the workload itself cannot be reloaded (Skip says why)
	GateNamespace          // --namespaces-to-ignore or the namespace selector
	GateNotInterested      // no reload annotation and no --auto-reload-all
)

// Resource identifies a watched ConfigMap, Secret or SecretProviderClass
// within the workload's namespace; its string form "configmap/name" is the
// key in the applied-hashes record.
type Resource struct {
	Kind refs.Kind
	Name string
}

func (r Resource) String() string { return string(r.Kind) + "/" + r.Name }

// Verdict is whether the workload watches one resource, and the rule that
// settled it, recorded where the rule fires.
type Verdict struct {
	Resource
	Watched bool
	// Rule is one of annotations' rules, or RuleKindIgnored; Detail says
	// it for people.
	Rule   annotations.Rule
	Detail string
}

// RuleKindIgnored: the controller watches no resource of the kind
// (--resources-to-ignore, CSI integration off), whatever the annotations.
const RuleKindIgnored annotations.Rule = "kind-ignored"

// kindIgnoredDetail says which setting turns the kind off:
// --resources-to-ignore=configMaps|secrets, or CSI integration off.
func kindIgnoredDetail(k refs.Kind) string {
	if k == refs.SecretProviderClass {
		return "the controller does not watch SecretProviderClasses (--enable-csi-integration is off)"
	}
	t := k.Title()
	return "the controller does not watch " + t + "s (--resources-to-ignore=" + strings.ToLower(t[:1]) + t[1:] + "s)"
}

// Watched is what the decision knows of one resource the workload watches.
type Watched struct {
	Resource
	Auto     bool   // watched through auto/search: the marker goes on a user
	Optional bool   // every use is optional: absence is fine
	Named    bool   // watched only through the reload list, not used by the pod spec
	Hash     string // current hash; "" when the resource does not exist
	// ResourceVersion, Created and Written place the current content in
	// time (firstsight.go).
	ResourceVersion  string
	Created, Written time.Time
	// Baseline is the content last applied.
	Baseline Baseline
	// Scope is which keys count (keys.go); AltHash is the hash under the
	// other mode's formula, "" when it is Hash: a baseline equal to it is
	// adopted, not reloaded, so switching mode rolls nothing. UnkeyedHash
	// is the per-key hash over unkeyed digests, the formula of releases
	// before keyed ones, "" when it is Hash or AltHash: adopted alike, so
	// the upgrade rolls nothing either.
	Scope       KeyScope
	AltHash     string
	UnkeyedHash string
}

// Baseline is what is known of the content last applied to a workload for
// one watched resource, and where it was learnt.
type Baseline struct {
	Hash  string
	Known bool
	From  BaselineSource
}

// BaselineSource is where a Baseline was learnt.
type BaselineSource int

const (
	FromNothing    BaselineSource = iota
	FromRecord                    // the applied-hashes record
	FromMarker                    // a reload marker in the template (evidence)
	FromFirstSight                // the first-sight rule (firstsight.go)
)

// Transition is why a watched resource's hash differs from the recorded one.
type Transition int

const (
	Changed Transition = iota
	Created
	Deleted
)

func (t Transition) String() string { return [...]string{"changed", "created", "deleted"}[t] }

// Reload is one change to apply.
type Reload struct {
	Watched
	Change Transition
}

// Skip is a change deliberately not applied.
type Skip struct {
	Resource
	Reason string
}

// Detail is the sentence a log line gives for the skip's reason.
func (s Skip) Detail() string { return SkipDetail(s.Reason) }

// SkipDetail is the sentence a log line gives for a skip reason.
func SkipDetail(reason string) string { return skipText[reason] }
