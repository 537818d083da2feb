package app

import "github.com/reloader-dev/reloader/controller/workload"

// declaredKinds reads --workload-kind.
func (o *Options) declaredKinds(bad func(string, ...any)) workload.Table {
	var declared []workload.Declared
	for _, s := range o.WorkloadKinds {
		d, err := workload.ParseDeclared(s)
		if err != nil {
			bad("--workload-kind: %v", err)
			continue
		}
		declared = append(declared, d)
	}
	t, err := workload.NewTable(declared)
	if err != nil {
		bad("--workload-kind: %v", err)
	}
	return t
}
