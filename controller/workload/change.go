package workload

// EnvChange sets (or, with Remove, deletes) one reload variable on a container.
type EnvChange struct {
	Container string
	Name      string
	Value     string
	Remove    bool
}

// Change is everything one sync writes to one workload, in one request where
// the kind allows it.
type Change struct {
	// Record is the new value of the applied-hashes annotation on the
	// workload's metadata (key RecordKey).
	RecordKey string
	Record    string
	// Env are reload variables (env-vars strategy); empty means no rollout
	// through the environment.
	Env []EnvChange
	// TemplateAnnotations are set on the pod template (annotations strategy).
	TemplateAnnotations map[string]string
	// MetaAnnotations are set on the workload's metadata besides the record
	// (a nil value deletes the key).
	MetaAnnotations map[string]*string
	// Paused sets spec.paused on a Deployment when not nil.
	Paused *bool
	// RestartAt sets spec.restartAt on an Argo Rollout (its "restart"
	// strategy) instead of changing the template.
	RestartAt *string
}

// Rollout reports whether the change rolls the workload.
func (c Change) Rollout() bool {
	return len(c.Env) > 0 || len(c.TemplateAnnotations) > 0 || c.RestartAt != nil
}
