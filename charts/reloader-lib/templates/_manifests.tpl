{{/*
Everything a chart built on this library installs. A consuming chart's only
template is `{{ include "reloader-lib.manifests" . }}`, so the reloader and
reloader-ubi charts differ in their values (the image) and nothing else.
*/}}
{{- define "reloader-lib.manifests" -}}
{{- include "reloader-lib.validate" . -}}
{{- range $name := list "serviceAccount" "webhookUrlSecret" "deployment" "service" "serviceMonitor" "podMonitor" "podDisruptionBudget" "networkPolicy" "verticalPodAutoscaler" }}
{{- with include (printf "reloader-lib.%s" $name) $ | trim }}
---
{{ . }}
{{- end }}
{{- end }}
{{ include "reloader-lib.rbac" . }}
{{- end -}}

{{- define "reloader-lib.notes" -}}
{{ include "reloader-lib.fullname" . }} runs {{ include "reloader-lib.image" . }} in namespace {{ (include "reloader-lib.namespace" .) }}.
{{- if .Values.reloader.watchGlobally }}
It watches every namespace{{ with .Values.reloader.namespaceSelector }} whose labels match {{ . }}{{ end }}.
{{- else }}
It watches only: {{ include "reloader-lib.watchedNamespaces" . | fromYamlArray | join ", " }}.
{{- end }}
{{- if not .Values.reloader.rbac.enabled }}
RBAC was not rendered (reloader.rbac.enabled=false): bind the rules listed in the chart README to
ServiceAccount {{ (include "reloader-lib.namespace" .) }}/{{ include "reloader-lib.serviceAccountName" . }} yourself.
{{- end }}
{{- if contains "stakater/reloader" .Values.image.repository }}
image.repository is {{ .Values.image.repository }}: stakater's image, not this chart's. Remove image.* from
the values carried over from stakater's chart to run ghcr.io/reloader-dev/reloader.
{{- end }}
{{- if not .Values.image.digest }}
The image is referenced by tag. For an auditable install pin it: --set image.digest=sha256:...
{{- end }}
{{- end -}}
