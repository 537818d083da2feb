package annotations

import "github.com/reloader-dev/reloader/controller/refs"

// ReloadKey is the annotation naming resources of kind to reload for
// (configmap.reloader.stakater.com/reload, ...).
func (n Names) ReloadKey(kind refs.Kind) string { return n.reload(kind) }

// TypedAutoKey is the auto annotation limited to kind
// (configmap.reloader.stakater.com/auto, ...).
func (n Names) TypedAutoKey(kind refs.Kind) string { return n.typedAuto(kind) }

// ExcludeKey is the annotation listing resources of kind never to reload for
// (configmaps.exclude.reloader.stakater.com/reload, ...).
func (n Names) ExcludeKey(kind refs.Kind) string { return n.exclude(kind) }
