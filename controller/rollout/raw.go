package rollout

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/reloader-dev/reloader/controller/workload"
)

// envOnRaw applies env changes to unstructured containers, touching only the
// env entries named by the changes: every other field of every container,
// known to k8s.io/api or not, is kept as it was.
func envOnRaw(key workload.Key, containers []any, env []workload.EnvChange) ([]any, error) {
	out := runtime.DeepCopyJSONValue(containers).([]any)
	for _, e := range env {
		found := false
		for i, raw := range out {
			ctr, ok := raw.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: spec.template.spec.containers[%d] is not an object", key, i)
			}
			if ctr["name"] != e.Container {
				continue
			}
			found = true
			vars, _ := ctr["env"].([]any)
			idx := -1
			for j, ev := range vars {
				if m, ok := ev.(map[string]any); ok && m["name"] == e.Name {
					idx = j
				}
			}
			switch {
			case e.Remove && idx >= 0:
				vars = append(vars[:idx], vars[idx+1:]...)
			case !e.Remove && idx >= 0:
				m := vars[idx].(map[string]any)
				m["value"] = e.Value
				delete(m, "valueFrom")
			case !e.Remove:
				vars = append(vars, map[string]any{"name": e.Name, "value": e.Value})
			}
			if len(vars) == 0 {
				delete(ctr, "env")
			} else {
				ctr["env"] = vars
			}
		}
		if !found && !e.Remove {
			return nil, fmt.Errorf("%s: no container %q in spec.template.spec.containers", key, e.Container)
		}
	}
	return out, nil
}
