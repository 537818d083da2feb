{{/*
Names, labels and the image reference. Every template is called with the
including chart's context, so .Chart is reloader or reloader-ubi, never this
library.
*/}}

{{- define "reloader-lib.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" | lower -}}
{{- end -}}

{{/*
<release>-<name> always, as stakater's chart names it (also for a release
called "reloader": reloader-reloader), so `helm upgrade` of a release
installed with that chart finds its Deployment, ServiceAccount and roles.
*/}}
{{- define "reloader-lib.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (default .Chart.Name .Values.nameOverride) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Where namespaced objects go: the top-level `namespace` value, else the release namespace. */}}
{{- define "reloader-lib.namespace" -}}
{{- .Values.namespace | default .Release.Namespace -}}
{{- end -}}

{{/*
The Deployment's selector is immutable, so it is stakater's (app, release)
plus reloader.matchLabels: an installed release upgrades in place.
*/}}
{{- define "reloader-lib.selectorLabels" -}}
app: {{ include "reloader-lib.fullname" . }}
release: {{ .Release.Name | quote }}
{{- with .Values.reloader.matchLabels }}
{{ tpl (toYaml .) $ }}
{{- end }}
{{- end -}}

{{- define "reloader-lib.labels" -}}
{{ include "reloader-lib.selectorLabels" . }}
app.kubernetes.io/name: {{ include "reloader-lib.name" . }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
heritage: {{ .Release.Service | quote }}
{{- end -}}

{{/* A user map (labels, annotations) with templates expanded, as stakater's chart does. */}}
{{- define "reloader-lib.tplMap" -}}
{{- with .map }}{{ tpl (toYaml .) $.root | nindent (int $.indent) }}{{ end -}}
{{- end -}}

{{- define "reloader-lib.serviceAccountName" -}}
{{- if .Values.reloader.serviceAccount.create -}}
{{- default (include "reloader-lib.fullname" .) .Values.reloader.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.reloader.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
HA is on when asked for, and also whenever more than one replica runs: two
replicas without leader election would both patch every workload.
*/}}
{{- define "reloader-lib.ha" -}}
{{- if or .Values.reloader.enableHA (gt (int .Values.reloader.deployment.replicas) 1) -}}true{{- end -}}
{{- end -}}

{{/*
The repository path without its registry host, so global.imageRegistry can
replace the host. A first component is a host when it has a dot or a port or
is localhost, the same rule container runtimes use.
*/}}
{{- define "reloader-lib.repositoryPath" -}}
{{- $parts := splitList "/" . -}}
{{- $first := first $parts -}}
{{- if and (gt (len $parts) 1) (or (contains "." $first) (contains ":" $first) (eq $first "localhost")) -}}
{{- rest $parts | join "/" -}}
{{- else -}}
{{- . -}}
{{- end -}}
{{- end -}}

{{/*
A digest always wins over the tag, also when global.imageRegistry is set (the
original chart dropped the digest there). The result is repository@sha256:...
so the kubelet pulls exactly the audited image.
*/}}
{{- define "reloader-lib.image" -}}
{{- $repository := .Values.image.repository -}}
{{- if .Values.global.imageRegistry -}}
{{- $path := .Values.image.name | default (include "reloader-lib.repositoryPath" .Values.image.repository) -}}
{{- $repository = printf "%s/%s" (trimSuffix "/" .Values.global.imageRegistry) $path -}}
{{- end -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" $repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repository (.Values.image.tag | default .Chart.AppVersion | toString) -}}
{{- end -}}
{{- end -}}

{{/*
global.imagePullSecrets accepts both spellings users have: names as strings
and objects with a name.
*/}}
{{- define "reloader-lib.imagePullSecrets" -}}
{{- range .Values.global.imagePullSecrets }}
{{- if kindIs "string" . }}
- name: {{ . }}
{{- else }}
- name: {{ .name }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
Combinations the controller cannot honour fail the install with the keys named,
instead of deploying something that silently does less than asked.
*/}}
{{- define "reloader-lib.validate" -}}
{{- $r := .Values.reloader -}}
{{- if and $r.ignoreSecrets $r.ignoreConfigMaps -}}
{{- fail "reloader.ignoreSecrets and reloader.ignoreConfigMaps are both true: Reloader would watch nothing; set at most one" -}}
{{- end -}}
{{- if and $r.watchGlobally (include "reloader-lib.namespaceList" . | fromYamlArray) -}}
{{- fail "reloader.namespaces is set while reloader.watchGlobally is true: set reloader.watchGlobally=false to watch only the listed namespaces" -}}
{{- end -}}
{{- if and (not $r.watchGlobally) $r.namespaceSelector -}}
{{- fail "reloader.namespaceSelector needs reloader.watchGlobally=true: selecting namespaces by label requires listing namespaces cluster-wide; list the namespaces in reloader.namespaces instead" -}}
{{- end -}}
{{- if and (not $r.watchGlobally) $r.ignoreNamespaces -}}
{{- fail "reloader.ignoreNamespaces needs reloader.watchGlobally=true (stakater's chart drops it silently otherwise): with watchGlobally=false list only the namespaces to watch in reloader.namespaces" -}}
{{- end -}}
{{- if and $r.webhookUrl ($r.webhookUrlSecret).name -}}
{{- fail "reloader.webhookUrl and reloader.webhookUrlSecret are both set: give the URL one way (webhookUrlSecret, a Secret of your own, is preferred)" -}}
{{- end -}}
{{- range $name := list "RELOADER_WEBHOOK_URL" "ALERT_WEBHOOK_URL" -}}
{{- if hasKey (((($r.deployment).env).open) | default dict) $name -}}
{{- fail (printf "reloader.deployment.env.open.%s is not supported: the URL is a credential and must come from a Secret: reloader.deployment.env.existing: {<secret-name>: {%s: <key>}}%s" $name $name (ternary " or reloader.webhookUrlSecret" "" (eq $name "RELOADER_WEBHOOK_URL"))) -}}
{{- end -}}
{{- end -}}
{{- if ((($r.deployment).env).secret) -}}
{{- fail "reloader.deployment.env.secret is not supported (the chart creates no Secrets, so values never hold credentials): store the values in a Secret yourself and reference it with reloader.deployment.env.existing: {<secret-name>: {ALERT_WEBHOOK_URL: <key>}}" -}}
{{- end -}}
{{- end -}}

{{/* reloader.namespaces as a clean list: it may be a list or a comma separated string. */}}
{{- define "reloader-lib.namespaceList" -}}
{{- $ns := .Values.reloader.namespaces | default list -}}
{{- if kindIs "string" $ns -}}{{- $ns = splitList "," $ns -}}{{- end -}}
{{- $clean := list -}}
{{- range $ns -}}{{- with . | toString | trim -}}{{- $clean = append $clean . -}}{{- end -}}{{- end -}}
{{- toYaml $clean -}}
{{- end -}}

{{/*
The Secret the chart writes for stakater's reloader.webhookUrl value, so a
values file written for stakater installs unchanged while the URL, a
credential, stays out of the Deployment (args, env values, pprof cmdline).
reloader.webhookUrlSecret, naming a Secret of your own, keeps it out of the
Helm release as well.
*/}}
{{- define "reloader-lib.webhookUrlSecretName" -}}
{{- printf "%s-webhook-url" (include "reloader-lib.fullname" . | trunc 51 | trimSuffix "-") -}}
{{- end -}}

{{- define "reloader-lib.webhookUrlSecret" -}}
{{- with .Values.reloader.webhookUrl -}}
apiVersion: v1
kind: Secret
metadata:
  name: {{ include "reloader-lib.webhookUrlSecretName" $ }}
  namespace: {{ include "reloader-lib.namespace" $ }}
  labels:
    {{- include "reloader-lib.labels" $ | nindent 4 }}
type: Opaque
stringData:
  url: {{ . | toString | quote }}
{{- end -}}
{{- end -}}
