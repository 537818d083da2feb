package refs

import corev1 "k8s.io/api/core/v1"

// Via is how a pod template uses a resource.
type Via string

const (
	ViaEnv       Via = "env"       // env[].valueFrom
	ViaEnvFrom   Via = "envFrom"   // envFrom
	ViaVolume    Via = "volume"    // a configMap, secret or CSI volume
	ViaProjected Via = "projected" // a projected volume source
)

// Use is one place a pod template uses a resource. Find says whether a
// template uses a resource; Uses says where, for people (reloader explain):
// a subPath mount or an environment variable is never refreshed in a running
// pod, only a reload delivers the change.
type Use struct {
	Kind Kind
	Name string
	Via  Via
	// Volume is the volume's name (Via volume or projected).
	Volume string
	// Container uses it: it mounts the volume or reads the variables. Empty
	// for a volume no container mounts.
	Container string
	// Init is true when Container is an init container.
	Init bool
	// MountPath and SubPath describe the mount (volumes only).
	MountPath, SubPath string
}

// Uses lists every use of a resource in spec, in the order Find walks them:
// volumes (one entry per mount), then env and envFrom of init containers and
// containers. It covers exactly the resources Find returns, and walks the
// spec as Find does, which is easiest to check with the walk kept whole.
func Uses(spec *corev1.PodSpec) []Use {
	var out []Use
	addVolume := func(u Use) {
		mounted := false
		for _, cs := range []struct {
			list []corev1.Container
			init bool
		}{{spec.InitContainers, true}, {spec.Containers, false}} {
			for i := range cs.list {
				for _, m := range cs.list[i].VolumeMounts {
					if m.Name == u.Volume {
						mu := u
						mu.Container, mu.Init, mu.MountPath, mu.SubPath = cs.list[i].Name, cs.init, m.MountPath, m.SubPath
						out = append(out, mu)
						mounted = true
					}
				}
			}
		}
		if !mounted {
			out = append(out, u)
		}
	}
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		if v.ConfigMap != nil && v.ConfigMap.Name != "" {
			addVolume(Use{Kind: ConfigMap, Name: v.ConfigMap.Name, Via: ViaVolume, Volume: v.Name})
		}
		if v.Secret != nil && v.Secret.SecretName != "" {
			addVolume(Use{Kind: Secret, Name: v.Secret.SecretName, Via: ViaVolume, Volume: v.Name})
		}
		if v.CSI != nil && v.CSI.VolumeAttributes[SecretProviderClassAttribute] != "" {
			addVolume(Use{Kind: SecretProviderClass, Name: v.CSI.VolumeAttributes[SecretProviderClassAttribute], Via: ViaVolume, Volume: v.Name})
		}
		if v.Projected != nil {
			for j := range v.Projected.Sources {
				s := &v.Projected.Sources[j]
				if s.ConfigMap != nil && s.ConfigMap.Name != "" {
					addVolume(Use{Kind: ConfigMap, Name: s.ConfigMap.Name, Via: ViaProjected, Volume: v.Name})
				}
				if s.Secret != nil && s.Secret.Name != "" {
					addVolume(Use{Kind: Secret, Name: s.Secret.Name, Via: ViaProjected, Volume: v.Name})
				}
			}
		}
	}
	for _, cs := range []struct {
		list []corev1.Container
		init bool
	}{{spec.InitContainers, true}, {spec.Containers, false}} {
		for i := range cs.list {
			c := &cs.list[i]
			for _, e := range c.Env {
				if vf := e.ValueFrom; vf != nil {
					if vf.ConfigMapKeyRef != nil && vf.ConfigMapKeyRef.Name != "" {
						out = append(out, Use{Kind: ConfigMap, Name: vf.ConfigMapKeyRef.Name, Via: ViaEnv, Container: c.Name, Init: cs.init})
					}
					if vf.SecretKeyRef != nil && vf.SecretKeyRef.Name != "" {
						out = append(out, Use{Kind: Secret, Name: vf.SecretKeyRef.Name, Via: ViaEnv, Container: c.Name, Init: cs.init})
					}
				}
			}
			for _, ef := range c.EnvFrom {
				if ef.ConfigMapRef != nil && ef.ConfigMapRef.Name != "" {
					out = append(out, Use{Kind: ConfigMap, Name: ef.ConfigMapRef.Name, Via: ViaEnvFrom, Container: c.Name, Init: cs.init})
				}
				if ef.SecretRef != nil && ef.SecretRef.Name != "" {
					out = append(out, Use{Kind: Secret, Name: ef.SecretRef.Name, Via: ViaEnvFrom, Container: c.Name, Init: cs.init})
				}
			}
		}
	}
	return out
}
