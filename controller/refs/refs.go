// Package refs finds the ConfigMaps and Secrets a pod template uses, and
// which container should carry the reload marker for each, with the same
// rules as stakater/Reloader so markers land where its users expect them.
package refs

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// Kind is the kind of a referenced resource.
type Kind string

const (
	ConfigMap Kind = "configmap"
	Secret    Kind = "secret"
	// SecretProviderClass is a Secrets Store CSI class, used through a CSI
	// volume's volumeAttributes.secretProviderClass.
	SecretProviderClass Kind = "secretproviderclass"
)

// SecretProviderClassAttribute is the CSI volume attribute naming the class.
const SecretProviderClassAttribute = "secretProviderClass"

// Ref is one resource the pod template uses.
type Ref struct {
	Kind Kind
	Name string
	// Optional is true when every use is marked optional: the pod starts
	// without it, so its absence is not an error.
	Optional bool
}

// Find lists the resources spec uses through volumes (including projected
// sources), env[].valueFrom and envFrom, in containers and init containers.
// The result is sorted and has no duplicates. It is one walk of the pod
// spec; split, the places a reference can hide would be harder to audit.
func Find(spec *corev1.PodSpec) []Ref {
	seen := map[Ref]int{} // key with Optional=false -> index
	var out []Ref
	add := func(kind Kind, name string, optional *bool) {
		if name == "" {
			return
		}
		opt := optional != nil && *optional
		k := Ref{Kind: kind, Name: name}
		if i, ok := seen[k]; ok {
			out[i].Optional = out[i].Optional && opt
			return
		}
		seen[k] = len(out)
		out = append(out, Ref{Kind: kind, Name: name, Optional: opt})
	}
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		if v.ConfigMap != nil {
			add(ConfigMap, v.ConfigMap.Name, v.ConfigMap.Optional)
		}
		if v.Secret != nil {
			add(Secret, v.Secret.SecretName, v.Secret.Optional)
		}
		if v.CSI != nil {
			add(SecretProviderClass, v.CSI.VolumeAttributes[SecretProviderClassAttribute], nil)
		}
		if v.Projected != nil {
			for j := range v.Projected.Sources {
				s := &v.Projected.Sources[j]
				if s.ConfigMap != nil {
					add(ConfigMap, s.ConfigMap.Name, s.ConfigMap.Optional)
				}
				if s.Secret != nil {
					add(Secret, s.Secret.Name, s.Secret.Optional)
				}
			}
		}
	}
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			c := &cs[i]
			for j := range c.Env {
				if vf := c.Env[j].ValueFrom; vf != nil {
					if vf.ConfigMapKeyRef != nil {
						add(ConfigMap, vf.ConfigMapKeyRef.Name, vf.ConfigMapKeyRef.Optional)
					}
					if vf.SecretKeyRef != nil {
						add(Secret, vf.SecretKeyRef.Name, vf.SecretKeyRef.Optional)
					}
				}
			}
			for j := range c.EnvFrom {
				ef := &c.EnvFrom[j]
				if ef.ConfigMapRef != nil {
					add(ConfigMap, ef.ConfigMapRef.Name, ef.ConfigMapRef.Optional)
				}
				if ef.SecretRef != nil {
					add(Secret, ef.SecretRef.Name, ef.SecretRef.Optional)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// ContainerFor names the container whose environment carries the reload
// marker for kind/name, following the original's rules: the container that
// mounts or references the resource; the first container when only an init
// container uses it; the first container for a named reload (auto false) of a
// resource the template does not use. ok is false when no container fits.
func ContainerFor(spec *corev1.PodSpec, kind Kind, name string, auto bool) (container string, ok bool) {
	first := func() (string, bool) {
		if len(spec.Containers) == 0 {
			return "", false
		}
		return spec.Containers[0].Name, true
	}
	if vol := volumeFor(spec.Volumes, kind, name); vol != "" {
		if c, found := mounting(spec.Containers, vol); found {
			return c, true
		}
		if _, found := mounting(spec.InitContainers, vol); found {
			return first()
		}
	}
	if c, found := referencing(spec.Containers, kind, name); found {
		return c, true
	}
	if _, found := referencing(spec.InitContainers, kind, name); found {
		return first()
	}
	if !auto {
		return first()
	}
	return "", false
}

func volumeFor(vols []corev1.Volume, kind Kind, name string) string {
	for i := range vols {
		v := &vols[i]
		switch kind {
		case ConfigMap:
			if v.ConfigMap != nil && v.ConfigMap.Name == name {
				return v.Name
			}
		case Secret:
			if v.Secret != nil && v.Secret.SecretName == name {
				return v.Name
			}
		case SecretProviderClass:
			if v.CSI != nil && v.CSI.VolumeAttributes[SecretProviderClassAttribute] == name {
				return v.Name
			}
		}
		if v.Projected != nil {
			for j := range v.Projected.Sources {
				s := &v.Projected.Sources[j]
				if kind == ConfigMap && s.ConfigMap != nil && s.ConfigMap.Name == name {
					return v.Name
				}
				if kind == Secret && s.Secret != nil && s.Secret.Name == name {
					return v.Name
				}
			}
		}
	}
	return ""
}

func mounting(cs []corev1.Container, volume string) (string, bool) {
	for i := range cs {
		for j := range cs[i].VolumeMounts {
			if cs[i].VolumeMounts[j].Name == volume {
				return cs[i].Name, true
			}
		}
	}
	return "", false
}

func referencing(cs []corev1.Container, kind Kind, name string) (string, bool) {
	for i := range cs {
		c := &cs[i]
		for j := range c.Env {
			vf := c.Env[j].ValueFrom
			if vf == nil {
				continue
			}
			if kind == ConfigMap && vf.ConfigMapKeyRef != nil && vf.ConfigMapKeyRef.Name == name {
				return c.Name, true
			}
			if kind == Secret && vf.SecretKeyRef != nil && vf.SecretKeyRef.Name == name {
				return c.Name, true
			}
		}
		for j := range c.EnvFrom {
			ef := &c.EnvFrom[j]
			if kind == ConfigMap && ef.ConfigMapRef != nil && ef.ConfigMapRef.Name == name {
				return c.Name, true
			}
			if kind == Secret && ef.SecretRef != nil && ef.SecretRef.Name == name {
				return c.Name, true
			}
		}
	}
	return "", false
}
