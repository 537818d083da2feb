package app

import (
	"github.com/reloader-dev/reloader/controller/fingerprint"
	"github.com/reloader-dev/reloader/controller/hash"
)

// effectiveOptions are the options as published in reloader-meta-info, with
// the original's JSON field names. Secrets are redacted: the ConfigMap is
// readable by anyone who can read ConfigMaps in the controller's namespace.
type effectiveOptions struct {
	AutoReloadAll                      bool     `json:"autoReloadAll"`
	ConfigmapUpdateOnChangeAnnotation  string   `json:"configmapUpdateOnChangeAnnotation"`
	SecretUpdateOnChangeAnnotation     string   `json:"secretUpdateOnChangeAnnotation"`
	ReloaderAutoAnnotation             string   `json:"reloaderAutoAnnotation"`
	IgnoreResourceAnnotation           string   `json:"ignoreResourceAnnotation"`
	ConfigmapReloaderAutoAnnotation    string   `json:"configmapReloaderAutoAnnotation"`
	SecretReloaderAutoAnnotation       string   `json:"secretReloaderAutoAnnotation"`
	ConfigmapExcludeReloaderAnnotation string   `json:"configmapExcludeReloaderAnnotation"`
	SecretExcludeReloaderAnnotation    string   `json:"secretExcludeReloaderAnnotation"`
	AutoSearchAnnotation               string   `json:"autoSearchAnnotation"`
	SearchMatchAnnotation              string   `json:"searchMatchAnnotation"`
	RolloutStrategyAnnotation          string   `json:"rolloutStrategyAnnotation"`
	PauseDeploymentAnnotation          string   `json:"pauseDeploymentAnnotation"`
	PauseDeploymentTimeAnnotation      string   `json:"pauseDeploymentTimeAnnotation"`
	LogFormat                          string   `json:"logFormat"`
	LogLevel                           string   `json:"logLevel"`
	IsArgoRollouts                     bool     `json:"isArgoRollouts"`
	ReloadStrategy                     string   `json:"reloadStrategy"`
	ReloadOnCreate                     bool     `json:"reloadOnCreate"`
	ReloadOnDelete                     bool     `json:"reloadOnDelete"`
	SyncAfterRestart                   bool     `json:"syncAfterRestart"`
	EnableHA                           bool     `json:"enableHA"`
	EnableCSIIntegration               bool     `json:"enableCSIIntegration"`
	WebhookURL                         string   `json:"webhookUrl"`
	ResourcesToIgnore                  []string `json:"resourcesToIgnore"`
	WorkloadTypesToIgnore              []string `json:"workloadTypesToIgnore"`
	Namespaces                         []string `json:"namespaces"`
	NamespaceSelectors                 []string `json:"namespaceSelectors"`
	ResourceSelectors                  []string `json:"resourceSelectors"`
	NamespacesToIgnore                 []string `json:"namespacesToIgnore"`
	EnablePProf                        bool     `json:"enablePProf"`
	PProfAddr                          string   `json:"pprofAddr"`
	ReloadMinInterval                  string   `json:"reloadMinInterval"`
	ReloadOnUsedKeysOnly               bool     `json:"reloadOnUsedKeysOnly"`
	MaxConcurrentRollouts              int      `json:"maxConcurrentRollouts,omitempty"`
	MaxConcurrentRolloutsPerNamespace  int      `json:"maxConcurrentRolloutsPerNamespace,omitempty"`
	ChangeWindow                       string   `json:"changeWindow,omitempty"`
	ReloadApproval                     string   `json:"reloadApproval,omitempty"`
	WorkloadKinds                      []string `json:"workloadKinds,omitempty"`
	// HashAlgorithm is published only when not stakater's sha1, so explain
	// hashes as the controller does (FIPS 140-only mode).
	HashAlgorithm string `json:"hashAlgorithm,omitempty"`
	// FingerprintKeySecret is published only when not the default, so
	// explain reads the key the controller digests under. Its name, never
	// its content.
	FingerprintKeySecret string `json:"fingerprintKeySecret,omitempty"`
}

func (o *Options) effective(r *Resolved) effectiveOptions {
	redact := func(s string) string {
		if s == "" {
			return ""
		}
		return "<redacted>"
	}
	c := r.Controller
	return effectiveOptions{
		AutoReloadAll:                      o.AutoReloadAll,
		ConfigmapUpdateOnChangeAnnotation:  o.Names.ConfigMapReload,
		SecretUpdateOnChangeAnnotation:     o.Names.SecretReload,
		ReloaderAutoAnnotation:             o.Names.Auto,
		IgnoreResourceAnnotation:           o.Names.Ignore,
		ConfigmapReloaderAutoAnnotation:    o.Names.ConfigMapAuto,
		SecretReloaderAutoAnnotation:       o.Names.SecretAuto,
		ConfigmapExcludeReloaderAnnotation: o.Names.ConfigMapExclude,
		SecretExcludeReloaderAnnotation:    o.Names.SecretExclude,
		AutoSearchAnnotation:               o.Names.Search,
		SearchMatchAnnotation:              o.Names.Match,
		RolloutStrategyAnnotation:          o.Names.RolloutStrategy,
		PauseDeploymentAnnotation:          o.Names.PausePeriod,
		PauseDeploymentTimeAnnotation:      o.Names.PausedAt,
		LogFormat:                          o.LogFormat,
		LogLevel:                           o.LogLevel,
		IsArgoRollouts:                     c.ArgoRollouts,
		ReloadStrategy:                     string(c.Strategy),
		ReloadOnCreate:                     c.ReloadOnCreate,
		ReloadOnDelete:                     c.ReloadOnDelete,
		SyncAfterRestart:                   o.SyncAfterRestart,
		EnableHA:                           o.EnableHA,
		EnableCSIIntegration:               o.EnableCSI,
		WebhookURL:                         redact(o.WebhookURL),
		ResourcesToIgnore:                  o.ResourcesToIgnore,
		WorkloadTypesToIgnore:              o.IgnoredWorkloads,
		Namespaces:                         c.Namespaces,
		NamespaceSelectors:                 o.NamespaceSelectors,
		ResourceSelectors:                  o.ResourceSelectors,
		NamespacesToIgnore:                 o.NamespacesToIgnore,
		EnablePProf:                        o.EnablePProf,
		PProfAddr:                          o.PProfAddr,
		ReloadMinInterval:                  c.MinReloadInterval.String(),
		ReloadOnUsedKeysOnly:               c.UsedKeysOnly,
		MaxConcurrentRollouts:              c.Budget.Max,
		MaxConcurrentRolloutsPerNamespace:  c.Budget.PerNamespace,
		ChangeWindow:                       o.ChangeWindow,
		ReloadApproval:                     o.ReloadApproval,
		WorkloadKinds:                      o.WorkloadKinds,
		HashAlgorithm:                      nonDefaultHash(c.Hash),
		FingerprintKeySecret:               nonDefaultKeySecret(o.FingerprintKeySecret),
	}
}

func nonDefaultKeySecret(s string) string {
	if s == fingerprint.DefaultSecretName {
		return ""
	}
	return s
}

func nonDefaultHash(a hash.Algorithm) string {
	if a == hash.SHA1 {
		return ""
	}
	return string(a)
}
