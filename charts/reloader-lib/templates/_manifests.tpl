{{/*
Everything a chart built on this library installs. A consuming chart's only
template is `{{ include "reloader-lib.manifests" . }}`, so the reloader and
reloader-ubi charts differ in their values (the image) and nothing else.
*/}}
{{- define "reloader-lib.manifests" -}}
{{- include "reloader-lib.validate" . -}}
{{- range $name := list "serviceAccount" "deployment" "service" "serviceMonitor" "podMonitor" "podDisruptionBudget" "networkPolicy" }}
{{- with include (printf "reloader-lib.%s" $name) $ | trim }}
---
{{ . }}
{{- end }}
{{- end }}
{{ include "reloader-lib.rbac" . }}
{{- end -}}

{{- define "reloader-lib.notes" -}}
{{ include "reloader-lib.fullname" . }} runs {{ include "reloader-lib.image" . }} in namespace {{ .Release.Namespace }}.
{{- if .Values.reloader.watchGlobally }}
It watches every namespace{{ with .Values.reloader.namespaceSelector }} whose labels match {{ . }}{{ end }}.
{{- else }}
It watches only: {{ include "reloader-lib.watchedNamespaces" . | fromYamlArray | join ", " }}.
{{- end }}
{{- if not .Values.reloader.rbac.enabled }}
RBAC was not rendered (reloader.rbac.enabled=false): bind the rules listed in the chart README to
ServiceAccount {{ .Release.Namespace }}/{{ include "reloader-lib.serviceAccountName" . }} yourself.
{{- end }}
{{- if not .Values.image.digest }}
The image is referenced by tag. For an auditable install pin it: --set image.digest=sha256:...
{{- end }}
{{- end -}}
