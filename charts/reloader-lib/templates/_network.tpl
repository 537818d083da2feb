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
  namespace: {{ include "reloader-lib.namespace" . }}
  labels:
    {{- include "reloader-lib.labels" . | nindent 4 }}
    {{- include "reloader-lib.tplMap" (dict "map" $svc.labels "root" $ "indent" 4) }}
  {{- with $svc.annotations }}
  annotations:
    {{- include "reloader-lib.tplMap" (dict "map" . "root" $ "indent" 4) }}
  {{- end }}
spec:
  type: ClusterIP
  selector:
    {{- include "reloader-lib.selectorLabels" . | nindent 4 }}
  {{- with $svc.ipFamilyPolicy }}
  ipFamilyPolicy: {{ . }}
  {{- end }}
  {{- with $svc.ipFamilies }}
  ipFamilies:
    {{- toYaml . | nindent 4 }}
  {{- end }}
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
  namespace: {{ with $m.namespace }}{{ tpl . $ }}{{ else }}{{ include "reloader-lib.namespace" . }}{{ end }}
  labels:
    {{- include "reloader-lib.labels" . | nindent 4 }}
    {{- include "reloader-lib.tplMap" (dict "map" $m.labels "root" $ "indent" 4) }}
  {{- with $m.annotations }}
  annotations:
    {{- include "reloader-lib.tplMap" (dict "map" . "root" $ "indent" 4) }}
  {{- end }}
spec:
  {{- /* The job label the original's monitors set, so its dashboards' job= matchers keep working. */}}
  jobLabel: {{ include "reloader-lib.fullname" . }}
  selector:
    matchLabels:
      {{- include "reloader-lib.selectorLabels" . | nindent 6 }}
  namespaceSelector:
    matchNames:
      - {{ include "reloader-lib.namespace" . }}
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
  namespace: {{ with $m.namespace }}{{ tpl . $ }}{{ else }}{{ include "reloader-lib.namespace" . }}{{ end }}
  labels:
    {{- include "reloader-lib.labels" . | nindent 4 }}
    {{- include "reloader-lib.tplMap" (dict "map" $m.labels "root" $ "indent" 4) }}
  {{- with $m.annotations }}
  annotations:
    {{- include "reloader-lib.tplMap" (dict "map" . "root" $ "indent" 4) }}
  {{- end }}
spec:
  {{- /* The job label the original's monitors set, so its dashboards' job= matchers keep working. */}}
  jobLabel: {{ include "reloader-lib.fullname" . }}
  selector:
    matchLabels:
      {{- include "reloader-lib.selectorLabels" . | nindent 6 }}
  namespaceSelector:
    matchNames:
      - {{ include "reloader-lib.namespace" . }}
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

{{/*
maxUnavailable wins when both are set, as in stakater's chart. With neither,
maxUnavailable 1: a budget that never blocks a node drain, where
minAvailable 1 at one replica would block every drain.
*/}}
{{- define "reloader-lib.podDisruptionBudget" -}}
{{- $p := .Values.reloader.podDisruptionBudget -}}
{{- if $p.enabled -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "reloader-lib.fullname" . }}
  namespace: {{ include "reloader-lib.namespace" . }}
  labels:
    {{- include "reloader-lib.labels" . | nindent 4 }}
spec:
  {{- if not (kindIs "invalid" $p.maxUnavailable) }}
  maxUnavailable: {{ $p.maxUnavailable }}
  {{- else if not (kindIs "invalid" $p.minAvailable) }}
  minAvailable: {{ $p.minAvailable }}
  {{- else }}
  maxUnavailable: 1
  {{- end }}
  selector:
    matchLabels:
      {{- include "reloader-lib.selectorLabels" . | nindent 6 }}
{{- end -}}
{{- end -}}

{{/*
Default deny both ways, then exactly what Reloader uses: scrapes of the metrics
port from netpol.from (any peer when empty, as in stakater's chart, so
enabling the policy never blinds monitoring); the API server on every port it
may listen on (443 via the kubernetes Service, 6443 on the endpoints most
distributions use, which a 443-only policy silently blocks after DNAT), towards
netpol.apiServer.to, else netpol.to (stakater's meaning: the peers of its
443 rule), else anywhere; DNS, so webhook hostnames resolve; and
netpol.toPorts to netpol.to (anywhere when empty) for webhooks.
*/}}
{{- define "reloader-lib.networkPolicy" -}}
{{- $n := .Values.reloader.netpol -}}
{{- if $n.enabled -}}
{{- $apiPeers := $n.apiServer.to | default $n.to -}}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "reloader-lib.fullname" . }}
  namespace: {{ include "reloader-lib.namespace" . }}
  labels:
    {{- include "reloader-lib.labels" . | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "reloader-lib.selectorLabels" . | nindent 6 }}
  policyTypes: [Ingress, Egress]
  ingress:
    - ports:
        - port: http
          protocol: TCP
      {{- with $n.from }}
      from:
        {{- toYaml . | nindent 8 }}
      {{- end }}
  egress:
    - ports:
        {{- range $n.apiServer.ports }}
        - port: {{ . }}
          protocol: TCP
        {{- end }}
      {{- with $apiPeers }}
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
    {{- with $n.toPorts }}
    - ports:
        {{- range . }}
        - port: {{ . }}
          protocol: TCP
        {{- end }}
      {{- with $n.to }}
      to:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- end }}
{{- end -}}
{{- end -}}

{{/*
Rendered whenever enabled (stakater's chart silently skips it when the
autoscaling.k8s.io API is not discovered): asking for a VPA on a cluster
without one fails the install, naming the kind.
*/}}
{{- define "reloader-lib.verticalPodAutoscaler" -}}
{{- $v := .Values.reloader.verticalPodAutoscaler -}}
{{- if $v.enabled -}}
apiVersion: autoscaling.k8s.io/v1
kind: VerticalPodAutoscaler
metadata:
  name: {{ include "reloader-lib.fullname" . }}
  namespace: {{ include "reloader-lib.namespace" . }}
  labels:
    {{- include "reloader-lib.labels" . | nindent 4 }}
spec:
  {{- with $v.recommenders }}
  recommenders:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  resourcePolicy:
    containerPolicies:
      - containerName: {{ include "reloader-lib.fullname" . }}
        {{- with $v.controlledResources }}
        controlledResources:
          {{- toYaml . | nindent 10 }}
        {{- end }}
        {{- with $v.controlledValues }}
        controlledValues: {{ . }}
        {{- end }}
        {{- with $v.maxAllowed }}
        maxAllowed:
          {{- toYaml . | nindent 10 }}
        {{- end }}
        {{- with $v.minAllowed }}
        minAllowed:
          {{- toYaml . | nindent 10 }}
        {{- end }}
  targetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "reloader-lib.fullname" . }}
  {{- with $v.updatePolicy }}
  updatePolicy:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
{{- end -}}
