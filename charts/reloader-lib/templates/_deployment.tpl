{{/*
The controller's command line. Flags keep the original's names so values files
written for stakater/Reloader mean the same thing here.
*/}}
{{- define "reloader-lib.args" -}}
{{- $r := .Values.reloader -}}
- --metrics-addr=:9090
{{- if $r.autoReloadAll }}
- --auto-reload-all=true
{{- end }}
{{- if and $r.reloadStrategy (ne $r.reloadStrategy "default") }}
- --reload-strategy={{ $r.reloadStrategy }}
{{- end }}
{{- if $r.reloadOnCreate }}
- --reload-on-create=true
{{- end }}
{{- if $r.reloadOnDelete }}
- --reload-on-delete=true
{{- end }}
{{- if $r.syncAfterRestart }}
- --sync-after-restart=true
{{- end }}
{{- if $r.ignoreSecrets }}
- --resources-to-ignore=secrets
{{- else if $r.ignoreConfigMaps }}
- --resources-to-ignore=configMaps
{{- end }}
{{- $ignoredWorkloads := list }}
{{- if $r.ignoreJobs }}{{ $ignoredWorkloads = append $ignoredWorkloads "jobs" }}{{ end }}
{{- if $r.ignoreCronJobs }}{{ $ignoredWorkloads = append $ignoredWorkloads "cronjobs" }}{{ end }}
{{- if $ignoredWorkloads }}
- --ignored-workload-types={{ join "," $ignoredWorkloads }}
{{- end }}
{{- if and (not $r.watchGlobally) $r.namespaces }}
- --namespaces={{ join "," (uniq $r.namespaces) }}
{{- end }}
{{- with $r.ignoreNamespaces }}
- --namespaces-to-ignore={{ . }}
{{- end }}
{{- with $r.namespaceSelector }}
- --namespace-selector={{ . }}
{{- end }}
{{- with $r.resourceLabelSelector }}
- --resource-label-selector={{ . }}
{{- end }}
{{- with $r.logFormat }}
- --log-format={{ . }}
{{- end }}
{{- with $r.logLevel }}
- --log-level={{ . }}
{{- end }}
{{- if $r.isArgoRollouts }}
- --is-Argo-Rollouts=true
{{- end }}
{{- if $r.isOpenshift }}
- --is-openshift=true
{{- end }}
{{- if $r.enableCSIIntegration }}
- --enable-csi-integration=true
{{- end }}
{{- with $r.webhookUrl }}
- --webhook-url={{ . }}
{{- end }}
{{- if include "reloader-lib.ha" . }}
- --enable-ha=true
- --ha-lock-name={{ $r.haLockName }}
{{- end }}
{{- if $r.enablePProf }}
- --enable-pprof=true
- --pprof-addr={{ $r.pprofAddr }}
{{- end }}
{{- range $r.deployment.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{- define "reloader-lib.env" -}}
{{- $r := .Values.reloader -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: RELOADER_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: RELOADER_DEPLOYMENT_NAME
  value: {{ include "reloader-lib.fullname" . | quote }}
{{- if and (not $r.watchGlobally) (not $r.namespaces) }}
{{- /* The Roles exist only in the release namespace, so that is all it may watch. */}}
- name: KUBERNETES_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
{{- end }}
{{- with $r.deployment.env }}
{{- range $name, $value := .open }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- range $name, $path := .field }}
- name: {{ $name }}
  valueFrom:
    fieldRef:
      fieldPath: {{ $path }}
{{- end }}
{{- range $secret, $keys := .existing }}
{{- range $name, $key := $keys }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ $key }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
runAsUser is dropped in OpenShift mode: the restricted-v2 SCC assigns a UID
from the namespace's range and rejects pods that pin one outside it.
*/}}
{{- define "reloader-lib.podSecurityContext" -}}
{{- $sc := deepCopy (.Values.reloader.deployment.securityContext | default dict) -}}
{{- if .Values.reloader.isOpenshift -}}
{{- $sc = omit $sc "runAsUser" -}}
{{- end -}}
{{- toYaml $sc -}}
{{- end -}}

{{- define "reloader-lib.containerSecurityContext" -}}
{{- $sc := deepCopy (.Values.reloader.deployment.containerSecurityContext | default dict) -}}
{{- if .Values.reloader.readOnlyRootFileSystem -}}
{{- $_ := set $sc "readOnlyRootFilesystem" true -}}
{{- end -}}
{{- toYaml $sc -}}
{{- end -}}

{{/*
Replicas of an HA install spread over nodes, so one node failure cannot take
the leader and its standby together. An explicit affinity wins.
*/}}
{{- define "reloader-lib.affinity" -}}
{{- if .Values.reloader.deployment.affinity -}}
{{- toYaml .Values.reloader.deployment.affinity -}}
{{- else if include "reloader-lib.ha" . -}}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "reloader-lib.selectorLabels" . | nindent 12 }}
{{- end -}}
{{- end -}}

{{- define "reloader-lib.deployment" -}}
{{- $r := .Values.reloader -}}
{{- $d := $r.deployment -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "reloader-lib.fullname" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "reloader-lib.labels" . | nindent 4 }}
    {{- with $d.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with $d.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  replicas: {{ $d.replicas }}
  revisionHistoryLimit: {{ $d.revisionHistoryLimit }}
  selector:
    matchLabels:
      {{- include "reloader-lib.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "reloader-lib.labels" . | nindent 8 }}
        {{- with $d.labels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $d.pod.annotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      serviceAccountName: {{ include "reloader-lib.serviceAccountName" . }}
      {{- /* The ServiceAccount does not mount its token by default; this pod is the one that needs it. */}}
      automountServiceAccountToken: true
      {{- with (include "reloader-lib.imagePullSecrets" . | trim) }}
      imagePullSecrets:
        {{- . | nindent 8 }}
      {{- end }}
      {{- with $d.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      securityContext:
        {{- include "reloader-lib.podSecurityContext" . | nindent 8 }}
      {{- with $d.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with (include "reloader-lib.affinity" .) }}
      affinity:
        {{- . | nindent 8 }}
      {{- end }}
      {{- with $d.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $d.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: reloader
          image: {{ include "reloader-lib.image" . | quote }}
          imagePullPolicy: {{ .Values.image.pullPolicy }}
          args:
            {{- include "reloader-lib.args" . | nindent 12 }}
          env:
            {{- include "reloader-lib.env" . | nindent 12 }}
          ports:
            - name: http
              containerPort: 9090
              protocol: TCP
            {{- if $r.enablePProf }}
            - name: pprof
              containerPort: {{ splitList ":" $r.pprofAddr | last | int }}
              protocol: TCP
            {{- end }}
          livenessProbe:
            {{- $liveness := dict "httpGet" (dict "path" "/live" "port" "http") "timeoutSeconds" 5 "periodSeconds" 10 "failureThreshold" 5 }}
            {{- toYaml (mergeOverwrite $liveness ($d.livenessProbe | default dict)) | nindent 12 }}
          readinessProbe:
            {{- $readiness := dict "httpGet" (dict "path" "/readyz" "port" "http") "timeoutSeconds" 5 "periodSeconds" 10 "failureThreshold" 5 }}
            {{- toYaml (mergeOverwrite $readiness ($d.readinessProbe | default dict)) | nindent 12 }}
          {{- with $d.resources }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          securityContext:
            {{- include "reloader-lib.containerSecurityContext" . | nindent 12 }}
          {{- if or $r.readOnlyRootFileSystem $r.volumeMounts }}
          volumeMounts:
            {{- if $r.readOnlyRootFileSystem }}
            - name: tmp
              mountPath: /tmp
            {{- end }}
            {{- with $r.volumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          {{- end }}
      {{- if or $r.readOnlyRootFileSystem $r.volumes }}
      volumes:
        {{- if $r.readOnlyRootFileSystem }}
        - name: tmp
          emptyDir: {}
        {{- end }}
        {{- with $r.volumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- end }}
{{- end -}}

{{- define "reloader-lib.serviceAccount" -}}
{{- if .Values.reloader.serviceAccount.create -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "reloader-lib.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "reloader-lib.labels" . | nindent 4 }}
    {{- with .Values.reloader.serviceAccount.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with .Values.reloader.serviceAccount.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- /* Only the Reloader pod gets a token; anything else scheduled with this account does not. */}}
automountServiceAccountToken: false
{{- with .Values.global.imagePullSecrets }}
imagePullSecrets:
  {{- include "reloader-lib.imagePullSecrets" $ | trim | nindent 2 }}
{{- end }}
{{- end -}}
{{- end -}}
