{{/*
RBAC, least privilege. The rules are the table in charts/reloader/README.md,
row by row, with two deliberate additions: `watch` on deployments,
statefulsets, daemonsets, cronjobs, jobs, rollouts and deploymentconfigs, because the controller is
level-triggered and keeps informers (list+watch) on workloads; and `patch` on
cronjobs and jobs, because it records what it applied on their metadata. The rendered rules carry a comment
saying so, for the reviewer reading `helm template` output. Workloads get
`patch`, never `update`: the controller only ever patches them. ignoreJobs
with CronJobs still reloaded keeps `create` on jobs and nothing else: the
controller then has no Job informer and no Job records, but a CronJob reload
creates a Job from the CronJob's template.

watchGlobally=true: one ClusterRole for the watched resources.
watchGlobally=false: no ClusterRole at all; one Role per watched namespace
(the release namespace plus reloader.namespaces, as stakater's chart does).
Either way a Role in the release namespace holds what only concerns Reloader
itself: its metadata ConfigMap, in HA mode its leader-election Lease, and
with reloadOnUsedKeysOnly the Secret of its fingerprint key.
Names are stakater's: <fullname>-role, <fullname>-role-binding,
<fullname>-metadata-role, <fullname>-metadata-role-binding.
*/}}

{{- define "reloader-lib.rbac.watchRules" -}}
{{- $r := .Values.reloader -}}
{{- if not $r.ignoreSecrets }}
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, list, watch]
{{- end }}
{{- if not $r.ignoreConfigMaps }}
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch]
{{- end }}
# watch on workloads: the controller is level-triggered and keeps informers on
# them; patch, not update: it only ever patches them.
- apiGroups: [apps]
  resources: [deployments, statefulsets, daemonsets]
  verbs: [get, list, watch, patch]
{{- if not $r.ignoreCronJobs }}
# patch on cronjobs and jobs: the controller records the hashes it applied on
# the workload's own metadata (reloader.dev/applied-hashes), which is what
# lets a restart neither miss a change nor roll anything twice.
- apiGroups: [batch]
  resources: [cronjobs]
  verbs: [get, list, watch, patch]
{{- end }}
{{- if not $r.ignoreJobs }}
- apiGroups: [batch]
  resources: [jobs]
  verbs: [create, delete, list, get, watch, patch]
{{- else if not $r.ignoreCronJobs }}
# create on jobs only: with Jobs ignored the controller neither watches nor
# reloads them, but a CronJob reload creates a Job from the CronJob's template.
- apiGroups: [batch]
  resources: [jobs]
  verbs: [create]
{{- end }}
- apiGroups: [""]
  resources: [events]
  verbs: [create, patch]
{{- if $r.enableCSIIntegration }}
- apiGroups: [secrets-store.csi.x-k8s.io]
  resources: [secretproviderclasses, secretproviderclasspodstatuses]
  verbs: [get, list, watch]
{{- end }}
{{- if $r.isArgoRollouts }}
- apiGroups: [argoproj.io]
  resources: [rollouts]
  verbs: [get, list, watch, patch]
{{- end }}
{{- if $r.isOpenshift }}
- apiGroups: [apps.openshift.io]
  resources: [deploymentconfigs]
  verbs: [get, list, watch, patch]
{{- end }}
{{- range $r.workloadKinds }}
# {{ .kind }}: a declared workload kind (--workload-kind), reloaded like a
# Deployment: the same four verbs, on its resource alone.
- apiGroups: [{{ .group | quote }}]
  resources: [{{ .resource | quote }}]
  verbs: [get, list, watch, patch]
{{- end }}
{{- end -}}

{{- define "reloader-lib.rbac.stateRules" -}}
# reloader-meta-info: Reloader's operational metadata, in its own namespace
# only. create cannot be limited by name (the name is not known before the
# object exists); reading and updating are limited to that one ConfigMap.
- apiGroups: [""]
  resources: [configmaps]
  verbs: [create]
- apiGroups: [""]
  resources: [configmaps]
  resourceNames: [reloader-meta-info]
  verbs: [get, update]
{{- if include "reloader-lib.ha" . }}
# create cannot be limited by name (the name is not known before the object
# exists); reading and renewing are limited to the one lock.
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [create]
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  resourceNames: [{{ .Values.reloader.haLockName | quote }}]
  verbs: [get, update]
{{- end }}
{{- if .Values.reloader.reloadOnUsedKeysOnly }}
# The key of the per-key fingerprints (--reload-on-used-keys-only), kept in
# the Secret reloader-fingerprint-key: made on the first start, read on every
# start. create cannot be limited by name (the name is not known before the
# object exists), so any Secret may be created here, in the release namespace
# only; reading is limited to that one Secret.
- apiGroups: [""]
  resources: [secrets]
  verbs: [create]
- apiGroups: [""]
  resources: [secrets]
  resourceNames: [reloader-fingerprint-key]
  verbs: [get]
{{- end }}
{{- end -}}

{{/*
The namespaces a namespaced install watches, as a sorted list: the release
namespace plus reloader.namespaces (stakater's chart always includes the
release namespace so the metadata ConfigMap, Lease and Events keep working).
*/}}
{{- define "reloader-lib.watchedNamespaces" -}}
{{- toYaml (concat (list (include "reloader-lib.namespace" .)) (include "reloader-lib.namespaceList" . | fromYamlArray) | uniq | sortAlpha) -}}
{{- end -}}

{{- define "reloader-lib.rbac.metadata" -}}
labels:
  {{- include "reloader-lib.labels" . | nindent 2 }}
  {{- include "reloader-lib.tplMap" (dict "map" .Values.reloader.rbac.labels "root" . "indent" 2) }}
{{- end -}}

{{- define "reloader-lib.rbac.subjects" -}}
subjects:
  - kind: ServiceAccount
    name: {{ include "reloader-lib.serviceAccountName" . }}
    namespace: {{ include "reloader-lib.namespace" . }}
{{- end -}}

{{- define "reloader-lib.rbac" -}}
{{- if .Values.reloader.rbac.enabled }}
{{- $fullname := include "reloader-lib.fullname" . }}
{{- if .Values.reloader.watchGlobally }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $fullname }}-role
  {{- include "reloader-lib.rbac.metadata" . | nindent 2 }}
rules:
  {{- include "reloader-lib.rbac.watchRules" . | trim | nindent 2 }}
  {{- if .Values.reloader.namespaceSelector }}
  - apiGroups: [""]
    resources: [namespaces]
    verbs: [get, list, watch]
  {{- end }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $fullname }}-role-binding
  {{- include "reloader-lib.rbac.metadata" . | nindent 2 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $fullname }}-role
{{ include "reloader-lib.rbac.subjects" . }}
{{- else }}
{{- range $ns := include "reloader-lib.watchedNamespaces" . | fromYamlArray }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $fullname }}-role
  namespace: {{ $ns }}
  {{- include "reloader-lib.rbac.metadata" $ | nindent 2 }}
rules:
  {{- include "reloader-lib.rbac.watchRules" $ | trim | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $fullname }}-role-binding
  namespace: {{ $ns }}
  {{- include "reloader-lib.rbac.metadata" $ | nindent 2 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ $fullname }}-role
{{ include "reloader-lib.rbac.subjects" $ }}
{{- end }}
{{- end }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $fullname }}-metadata-role
  namespace: {{ include "reloader-lib.namespace" . }}
  {{- include "reloader-lib.rbac.metadata" . | nindent 2 }}
rules:
  {{- include "reloader-lib.rbac.stateRules" . | trim | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $fullname }}-metadata-role-binding
  namespace: {{ include "reloader-lib.namespace" . }}
  {{- include "reloader-lib.rbac.metadata" . | nindent 2 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ $fullname }}-metadata-role
{{ include "reloader-lib.rbac.subjects" . }}
{{- end }}
{{- end -}}
