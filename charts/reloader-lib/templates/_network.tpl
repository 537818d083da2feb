{{/*
Service, Prometheus Operator monitors, PodDisruptionBudget and NetworkPolicy.
*/}}

{{/*
The original chart renders a Service whenever reloader.service has any key;
that stays true here (enabled: false turns it off), and a ServiceMonitor
always gets the Service it scrapes through.
*/}}
{{- define "reloader-lib.serviceEnabled" -}}
{{- $svc := .Values.reloader.service | default dict -}}
{{- if .Values.reloader.serviceMonitor.enabled -}}true
{{- else if and $svc (not (and (hasKey $svc "enabled") (not $svc.enabled))) -}}true
{{- end -}}
{{- end -}}

{{- define "reloader-lib.service" -}}
{{- if include "reloader-lib.serviceEnabled" . -}}
{{- $svc := .Values.reloader.service | default dict -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "reloader-lib.fullname" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "reloader-lib.labels" . | nindent 4 }}
    {{- with $svc.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with $svc.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: ClusterIP
  selector:
    {{- include "reloader-lib.selectorLabels" . | nindent 4 }}
  ports:
    - name: http
      port: {{ $svc.port | default 9090 }}
      targetPort: http
      protocol: TCP
{{- end -}}
{{- end -}}

{{- define "reloader-lib.monitorCommon" -}}
{{- with .interval }}
interval: {{ . }}
{{- end }}
{{- with .timeout }}
scrapeTimeout: {{ . }}
{{- end }}
{{- with .scheme }}
scheme: {{ . }}
{{- end }}
{{- with .tlsConfig }}
tlsConfig:
  {{- toYaml . | nindent 2 }}
{{- end }}
honorLabels: {{ if hasKey . "honorLabels" }}{{ .honorLabels }}{{ else }}true{{ end }}
{{- with .metricRelabelings }}
metricRelabelings:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .relabelings }}
relabelings:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "reloader-lib.serviceMonitor" -}}
{{- $m := .Values.reloader.serviceMonitor -}}
{{- if $m.enabled -}}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "reloader-lib.fullname" . }}
  namespace: {{ $m.namespace | default .Release.Namespace }}
  labels:
    {{- include "reloader-lib.labels" . | nindent 4 }}
    {{- with $m.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with $m.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "reloader-lib.selectorLabels" . | nindent 6 }}
  namespaceSelector:
    matchNames:
      - {{ .Release.Namespace }}
  endpoints:
    - port: http
      path: /metrics
      {{- include "reloader-lib.monitorCommon" $m | nindent 6 }}
      {{- with $m.bearerTokenFile }}
      bearerTokenFile: {{ . }}
      {{- end }}
  {{- with $m.targetLabels }}
  targetLabels:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
{{- end -}}

{{- define "reloader-lib.podMonitor" -}}
{{- $m := .Values.reloader.podMonitor -}}
{{- if $m.enabled -}}
apiVersion: monitoring.coreos.com/v1
kind: PodMonitor
metadata:
  name: {{ include "reloader-lib.fullname" . }}
  namespace: {{ $m.namespace | default .Release.Namespace }}
  labels:
    {{- include "reloader-lib.labels" . | nindent 4 }}
    {{- with $m.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with $m.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "reloader-lib.selectorLabels" . | nindent 6 }}
  namespaceSelector:
    matchNames:
      - {{ .Release.Namespace }}
  podMetricsEndpoints:
    - port: http
      path: /metrics
      {{- include "reloader-lib.monitorCommon" $m | nindent 6 }}
      {{- with $m.bearerTokenSecret }}
      bearerTokenSecret:
        {{- toYaml . | nindent 8 }}
      {{- end }}
  {{- with $m.podTargetLabels }}
  podTargetLabels:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
{{- end -}}

{{- define "reloader-lib.podDisruptionBudget" -}}
{{- $p := .Values.reloader.podDisruptionBudget -}}
{{- if $p.enabled -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "reloader-lib.fullname" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "reloader-lib.labels" . | nindent 4 }}
spec:
  {{- if hasKey $p "maxUnavailable" }}
  maxUnavailable: {{ $p.maxUnavailable }}
  {{- else }}
  minAvailable: {{ $p.minAvailable | default 1 }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "reloader-lib.selectorLabels" . | nindent 6 }}
{{- end -}}
{{- end -}}

{{/*
Default deny both ways, then exactly what Reloader uses: scrapes of the metrics
port from netpol.from; the API server on every port it may listen on (443 via
the kubernetes Service, 6443 on the endpoints most distributions use, which a
443-only policy silently blocks after DNAT); DNS, so webhook hostnames resolve;
and 443 to netpol.to for webhooks.
*/}}
{{- define "reloader-lib.networkPolicy" -}}
{{- $n := .Values.reloader.netpol -}}
{{- if $n.enabled -}}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "reloader-lib.fullname" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "reloader-lib.labels" . | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "reloader-lib.selectorLabels" . | nindent 6 }}
  policyTypes: [Ingress, Egress]
  {{- if $n.from }}
  ingress:
    - from:
        {{- toYaml $n.from | nindent 8 }}
      ports:
        - port: http
          protocol: TCP
  {{- else }}
  ingress: []
  {{- end }}
  egress:
    - ports:
        {{- range $n.apiServer.ports }}
        - port: {{ . }}
          protocol: TCP
        {{- end }}
      {{- with $n.apiServer.to }}
      to:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- if $n.dns.enabled }}
    - ports:
        {{- range $n.dns.ports }}
        - port: {{ . }}
          protocol: UDP
        - port: {{ . }}
          protocol: TCP
        {{- end }}
      {{- with $n.dns.to }}
      to:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- end }}
    {{- /* An empty `to` would mean everywhere, so without peers there is no webhook rule. */}}
    {{- if $n.to }}
    - to:
        {{- toYaml $n.to | nindent 8 }}
      ports:
        {{- range $n.toPorts }}
        - port: {{ . }}
          protocol: TCP
        {{- end }}
    {{- end }}
{{- end -}}
{{- end -}}
