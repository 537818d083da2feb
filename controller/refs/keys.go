package refs

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// KeyUse says which keys of one ConfigMap or Secret a pod template reads.
// Uses that name keys (env[].valueFrom.*KeyRef, a volume's or projected
// source's items) read only those; any other use (envFrom, a volume or
// projected source without items) reads every key, present and future.
type KeyUse struct {
	Kind Kind
	Name string
	// Keys are the keys named by the uses that name keys, sorted, without
	// duplicates.
	Keys []string
	// KeysVia are how those keys are named (ViaEnv, ViaVolume, ViaProjected),
	// in walk order, without duplicates.
	KeysVia []Via
	// WholeVia are the uses that read every key (ViaEnvFrom, ViaVolume,
	// ViaProjected); empty when every use names keys.
	WholeVia []Via
}

// Whole reports whether some use reads every key of the resource.
func (u KeyUse) Whole() bool { return len(u.WholeVia) > 0 }

// KeyUses lists, for every ConfigMap and Secret spec uses, which keys its
// uses read, sorted by kind and name as Find sorts. It walks what Find walks:
// volumes (and projected sources), then env and envFrom of init containers
// and containers. Ephemeral containers are not walked: a pod template cannot
// carry them, and Find does not watch what only they would use.
func KeyUses(spec *corev1.PodSpec) []KeyUse {
	var set keyUseSet
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		if v.ConfigMap != nil {
			set.add(ConfigMap, v.ConfigMap.Name, ViaVolume, nonEmpty(v.ConfigMap.Items))
		}
		if v.Secret != nil {
			set.add(Secret, v.Secret.SecretName, ViaVolume, nonEmpty(v.Secret.Items))
		}
		if v.Projected != nil {
			for j := range v.Projected.Sources {
				s := &v.Projected.Sources[j]
				if s.ConfigMap != nil {
					set.add(ConfigMap, s.ConfigMap.Name, ViaProjected, nonEmpty(s.ConfigMap.Items))
				}
				if s.Secret != nil {
					set.add(Secret, s.Secret.Name, ViaProjected, nonEmpty(s.Secret.Items))
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
						set.addKey(ConfigMap, vf.ConfigMapKeyRef.Name, vf.ConfigMapKeyRef.Key)
					}
					if vf.SecretKeyRef != nil {
						set.addKey(Secret, vf.SecretKeyRef.Name, vf.SecretKeyRef.Key)
					}
				}
			}
			for j := range c.EnvFrom {
				ef := &c.EnvFrom[j]
				if ef.ConfigMapRef != nil {
					set.add(ConfigMap, ef.ConfigMapRef.Name, ViaEnvFrom, nil)
				}
				if ef.SecretRef != nil {
					set.add(Secret, ef.SecretRef.Name, ViaEnvFrom, nil)
				}
			}
		}
	}
	return set.sorted()
}

// keyUseSet gathers KeyUses in walk order, one per resource.
type keyUseSet struct {
	idx  map[Ref]int
	list []KeyUse
}

func (s *keyUseSet) at(kind Kind, name string) *KeyUse {
	if s.idx == nil {
		s.idx = map[Ref]int{}
	}
	k := Ref{Kind: kind, Name: name}
	i, ok := s.idx[k]
	if !ok {
		i = len(s.list)
		s.idx[k] = i
		s.list = append(s.list, KeyUse{Kind: kind, Name: name})
	}
	return &s.list[i]
}

// add records a use through via: of the keys items names, or (items nil)
// of every key.
func (s *keyUseSet) add(kind Kind, name string, via Via, items []corev1.KeyToPath) {
	if name == "" {
		return
	}
	u := s.at(kind, name)
	if items == nil {
		u.WholeVia = addVia(u.WholeVia, via)
		return
	}
	u.KeysVia = addVia(u.KeysVia, via)
	for _, it := range items {
		u.Keys = append(u.Keys, it.Key)
	}
}

// addKey records an env keyRef.
func (s *keyUseSet) addKey(kind Kind, name, key string) {
	if name == "" {
		return
	}
	u := s.at(kind, name)
	u.KeysVia = addVia(u.KeysVia, ViaEnv)
	u.Keys = append(u.Keys, key)
}

// sorted is the set sorted as Find sorts, each resource's keys sorted and
// without duplicates.
func (s *keyUseSet) sorted() []KeyUse {
	for i := range s.list {
		slices.Sort(s.list[i].Keys)
		s.list[i].Keys = slices.Compact(s.list[i].Keys)
	}
	slices.SortFunc(s.list, func(a, b KeyUse) int {
		if c := strings.Compare(string(a.Kind), string(b.Kind)); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return s.list
}

func addVia(list []Via, v Via) []Via {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}

// nonEmpty is items, or nil when it lists none: a volume with an empty items
// list projects every key, as one without.
func nonEmpty(items []corev1.KeyToPath) []corev1.KeyToPath {
	if len(items) == 0 {
		return nil
	}
	return items
}
