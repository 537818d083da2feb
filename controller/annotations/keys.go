package annotations

import "github.com/reloader-dev/reloader/controller/refs"

// ReloadKey is the annotation naming resources of kind to reload for
// (configmap.reloader.stakater.com/reload, ...).
func (n Names) ReloadKey(kind refs.Kind) string { return n.reload(kind) }

// TypedAutoKey is the auto annotation limited to kind
// (configmap.reloader.stakater.com/auto, ...).
func (n Names) TypedAutoKey(kind refs.Kind) string { return n.typedAuto(kind) }

// OptInKeys are the annotations any one of which opts a workload into
// reloading (Interested), on its metadata or its pod template.
func (n Names) OptInKeys() []string {
	return []string{n.Auto, n.ConfigMapAuto, n.SecretAuto, n.SPCAuto, n.ConfigMapReload, n.SecretReload, n.SPCReload, n.Search}
}

// MisplacedOnResource are the workload annotations a ConfigMap or Secret
// sometimes carries by mistake, where they have no effect.
func (n Names) MisplacedOnResource() []string {
	return []string{n.Auto, n.ConfigMapAuto, n.SecretAuto, n.ConfigMapReload, n.SecretReload, n.Search}
}
