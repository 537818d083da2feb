// Package audit is the controller's audit trail: one JSON line per decision
// about one resource of one workload (reloaded, deferred, skipped, sent to
// the webhook, failed), for change management to answer "who changed which
// Secret, which workloads rolled because of it, and when".
//
// The lines go to an io.Writer (the process's stdout with --audit-log, so a
// log pipeline routes them apart from the logs on stderr); the controller
// never writes a file. A line names objects, resourceVersions, field
// managers and hash prefixes, never a value: the Record type has no field
// that could hold one, and Write cuts every hash to HashPrefixLen.
//
// Field names are part of the interface, versioned by Schema: a change that
// renames or removes a field gets a new schema; adding one does not.
//
//	{"schema":"reloader.dev/audit/v1","time":"2026-12-02T19:00:00Z",
//	 "workload":{"kind":"Deployment","namespace":"shop","name":"api"},
//	 "resource":{"kind":"Secret","name":"db","resourceVersion":"4711"},
//	 "changedBy":{"manager":"bob","operation":"Update","time":"2026-12-02T18:59:58Z"},
//	 "oldHash":"3f2a9c0d1e2b","newHash":"8b1d0e7c6a5f","strategy":"env-vars",
//	 "decision":"reloaded","reason":"changed"}
package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// Schema names the line format; every line carries it first.
const Schema = "reloader.dev/audit/v1"

// HashPrefixLen is the most of a hash a line carries: enough to tell two
// contents apart in a review, too little to stand in for the hash itself.
const HashPrefixLen = 12

// Decision is what the controller did about a change.
type Decision string

const (
	// Reloaded: the workload was rolled (or a CronJob's Job created, a Job
	// recreated) for the resource.
	Reloaded Decision = "reloaded"
	// Deferred: the reload is due but held (storm control, a budget, a
	// window); a later line says what became of it.
	Deferred Decision = "deferred"
	// Skipped: the change is deliberately not applied (reason says why, as
	// reloader_skipped_total does).
	Skipped Decision = "skipped"
	// Webhook: --webhook-url mode sent the change to the webhook instead.
	Webhook Decision = "webhook"
	// Failed: the write was refused; it is retried.
	Failed Decision = "failed"
	// AwaitingApproval: the reload waits for a person to approve its change
	// (Change); a later line says what became of it.
	AwaitingApproval Decision = "awaiting-approval"
	// Notified: the workload is notify-only: the change was announced and
	// recorded, and the workload not rolled.
	Notified Decision = "notified"
)

// Object names a workload.
type Object struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Resource names the ConfigMap, Secret or SecretProviderClass that changed,
// in the workload's namespace, at the resourceVersion decided on.
type Resource struct {
	Kind            string `json:"kind"`
	Name            string `json:"name"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// Writer is the write that last changed the resource, from the newest entry
// of its managedFields: the field manager (kubectl, a GitOps controller, a
// client's FieldManager), its operation (Update or Apply) and its time.
type Writer struct {
	Manager   string    `json:"manager"`
	Operation string    `json:"operation,omitempty"`
	Time      time.Time `json:"time,omitzero"`
}

// Record is one line. Schema is set by Write.
type Record struct {
	Schema   string    `json:"schema"`
	Time     time.Time `json:"time"`
	Workload Object    `json:"workload"`
	Resource Resource  `json:"resource"`
	// ChangedBy is absent when the resource's metadata does not tell (no
	// managedFields, or the cache has moved past the version decided on).
	ChangedBy *Writer `json:"changedBy,omitempty"`
	// OldHash and NewHash are prefixes of the content last applied and of
	// the current one; absent when there is none (a created or deleted
	// resource, a first sight).
	OldHash  string   `json:"oldHash,omitempty"`
	NewHash  string   `json:"newHash,omitempty"`
	Strategy string   `json:"strategy"`
	Decision Decision `json:"decision"`
	Reason   string   `json:"reason,omitempty"`
	// Change identifies the change under approval (decide.ChangeID);
	// ApprovedBy is the write that approved it, from the workload's
	// managedFields: the approver's field manager.
	Change     string  `json:"change,omitempty"`
	ApprovedBy *Writer `json:"approvedBy,omitempty"`
}

// Logger writes Records as JSON lines. It is safe for concurrent use; a nil
// Logger (audit off) writes nothing.
type Logger struct {
	mu sync.Mutex
	w  io.Writer
}

// New is a Logger writing to w.
func New(w io.Writer) *Logger { return &Logger{w: w} }

// Write encodes r as one line and writes it with one Write call, so lines
// from concurrent workers never interleave.
func (l *Logger) Write(r Record) error {
	if l == nil {
		return nil
	}
	r.Schema = Schema
	r.OldHash, r.NewHash = prefix(r.OldHash), prefix(r.NewHash)
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding the audit record of %s/%s: %w", r.Workload.Namespace, r.Workload.Name, err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(line); err != nil {
		return fmt.Errorf("writing the audit record of %s/%s: %w", r.Workload.Namespace, r.Workload.Name, err)
	}
	return nil
}

func prefix(h string) string {
	if len(h) > HashPrefixLen {
		return h[:HashPrefixLen]
	}
	return h
}
