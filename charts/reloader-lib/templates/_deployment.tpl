{{/*
The controller's command line: the flags stakater's chart renders for the
same values (as --flag=value), so a values file means the same here and the
flags are ones either controller accepts. Our own flags appear only when a
value differs from the controller's default.
*/}}
{{- define "reloader-lib.args" -}}
{{- $r := .Values.reloader -}}
{{- with $r.logFormat }}
- --log-format={{ . }}
{{- end }}
{{- with $r.logLevel }}
- --log-level={{ . }}
{{- end }}
{{- if $r.ignoreSecrets }}
- --resources-to-ignore=secrets
{{- end }}
{{- if $r.ignoreConfigMaps }}
- --resources-to-ignore=configmaps
{{- end }}
{{- $ignoredWorkloads := list }}
{{- if $r.ignoreJobs }}{{ $ignoredWorkloads = append $ignoredWorkloads "jobs" }}{{ end }}
{{- if $r.ignoreCronJobs }}{{ $ignoredWorkloads = append $ignoredWorkloads "cronjobs" }}{{ end }}
{{- if $ignoredWorkloads }}
- --ignored-workload-types={{ join "," $ignoredWorkloads }}
{{- end }}
{{- if include "reloader-lib.namespaceList" . | fromYamlArray }}
- --namespaces={{ include "reloader-lib.watchedNamespaces" . | fromYamlArray | join "," }}
{{- end }}
{{- if $r.watchGlobally }}
{{- with $r.ignoreNamespaces }}
- --namespaces-to-ignore={{ . }}
{{- end }}
{{- with $r.namespaceSelector }}
- --namespace-selector={{ . }}
{{- end }}
{{- end }}
{{- with $r.resourceLabelSelector }}
- --resource-label-selector={{ . }}
{{- end }}
{{- if $r.enablePProf }}
- --enable-pprof=true
{{- with $r.pprofAddr }}
- --pprof-addr={{ . }}
{{- end }}
{{- end }}
{{- if $r.enableCSIIntegration }}
- --enable-csi-integration=true
{{- end }}
{{- with $r.custom_annotations }}
{{- range $key, $flag := dict "configmap" "configmap-annotation" "secret" "secret-annotation" "auto" "auto-annotation" "secret_auto" "secret-auto-annotation" "configmap_auto" "configmap-auto-annotation" "search" "auto-search-annotation" "match" "search-match-annotation" "ignore" "ignore-annotation" "pausePeriod" "pause-deployment-annotation" "pauseTime" "pause-deployment-time-annotation" }}
{{- with index $r.custom_annotations $key }}
- --{{ $flag }}={{ . }}
{{- end }}
{{- end }}
{{- end }}
{{- if $r.isArgoRollouts }}
- --is-Argo-Rollouts=true
{{- end }}
{{- range $r.workloadKinds }}
- --workload-kind={{ .group }}/{{ .version }}/{{ .resource }},kind={{ .kind }}{{ with .template }},template={{ . }}{{ end }}{{ with .progress }},progress={{ . }}{{ end }}
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
{{- if and $r.reloadStrategy (ne $r.reloadStrategy "default") }}
- --reload-strategy={{ $r.reloadStrategy }}
{{- end }}
{{- if include "reloader-lib.ha" . }}
- --enable-ha=true
{{- if ne $r.haLockName "stakater-reloader-lock" }}
- --ha-lock-name={{ $r.haLockName }}
{{- end }}
{{- end }}
{{- if $r.autoReloadAll }}
- --auto-reload-all=true
{{- end }}
{{- if $r.reloadOnUsedKeysOnly }}
- --reload-on-used-keys-only=true
{{- end }}
{{- if and $r.reloadApproval (ne $r.reloadApproval "none") }}
- --reload-approval={{ $r.reloadApproval }}
{{- end }}
{{- range $r.deployment.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{/*
The environment stakater's chart gives the container (GOMAXPROCS and
GOMEMLIMIT from the limits, RELOADER_*, METRICS_COUNT_BY_NAMESPACE), plus
POD_NAME/POD_NAMESPACE always, and the user's variables.
*/}}
{{- define "reloader-lib.env" -}}
{{- $r := .Values.reloader -}}
{{- $d := $r.deployment -}}
- name: GOMAXPROCS
{{- with $d.gomaxprocsOverride }}
  value: {{ . | toString | quote }}
{{- else }}
  valueFrom:
    resourceFieldRef:
      resource: limits.cpu
      divisor: "1"
{{- end }}
- name: GOMEMLIMIT
{{- with $d.gomemlimitOverride }}
  value: {{ . | toString | quote }}
{{- else }}
  valueFrom:
    resourceFieldRef:
      resource: limits.memory
      divisor: "1"
{{- end }}
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
{{- if and (not $r.watchGlobally) (not (include "reloader-lib.namespaceList" . | fromYamlArray)) }}
{{- /* The Roles exist only in the release namespace, so that is all it may watch. */}}
- name: KUBERNETES_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
{{- end }}
{{- if $r.enableMetricsByNamespace }}
- name: METRICS_COUNT_BY_NAMESPACE
  value: enabled
{{- end }}
{{- /* The webhook URL is a credential: from a Secret, never in args. */}}
{{- with ($r.webhookUrlSecret).name }}
- name: RELOADER_WEBHOOK_URL
  valueFrom:
    secretKeyRef:
      name: {{ . | quote }}
      key: {{ $r.webhookUrlSecret.key | default "url" | quote }}
{{- else }}
{{- if $r.webhookUrl }}
- name: RELOADER_WEBHOOK_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "reloader-lib.webhookUrlSecretName" $ | quote }}
      key: url
{{- end }}
{{- end }}
{{- with $d.env }}
{{- range $name, $value := .open }}
{{- if not (empty $value) }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- end }}
{{- range $secret, $keys := .existing }}
{{- range $name, $key := $keys }}
{{- if $key }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ $key }}
{{- end }}
{{- end }}
{{- end }}
{{- range $name, $path := .field }}
{{- if $path }}
- name: {{ $name }}
  valueFrom:
    fieldRef:
      fieldPath: {{ $path }}
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

{{/*
The user's container securityContext merged over the hardening (no privilege
escalation, no capabilities): stakater's default values set it to {}, which
must not strip what keeps the pod "restricted". A key set here wins.
*/}}
{{- define "reloader-lib.containerSecurityContext" -}}
{{- $sc := deepCopy (.Values.reloader.deployment.containerSecurityContext | default dict) -}}
{{- $sc = merge $sc (dict "allowPrivilegeEscalation" false "capabilities" (dict "drop" (list "ALL"))) -}}
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

{{/*
How `helm upgrade` replaces the controller's pod. Without HA nothing stops
two controllers from writing reloads at once, each from its own cache, so
the old pod is stopped before the new one starts (Recreate): a few seconds
without a controller, which misses nothing, as it is level-triggered and
catches up when it starts. With HA the replicas elect a leader through the
Lease, so a surge pod only joins as a standby until the old leader is gone:
RollingUpdate, one pod at a time, never below the replicas asked for.
reloader.deployment.strategy, when set, is the strategy as given.
*/}}
{{- define "reloader-lib.strategy" -}}
{{- if .Values.reloader.deployment.strategy -}}
{{- toYaml .Values.reloader.deployment.strategy -}}
{{- else if include "reloader-lib.ha" . -}}
type: RollingUpdate
rollingUpdate:
  maxUnavailable: 0
  maxSurge: 1
{{- else -}}
type: Recreate
{{- end -}}
{{- end -}}

{{- define "reloader-lib.deployment" -}}
{{- $r := .Values.reloader -}}
{{- $d := $r.deployment -}}
{{- $volumes := concat ($d.volumes | default list) ($r.volumes | default list) -}}
{{- $volumeMounts := concat ($d.volumeMounts | default list) ($r.volumeMounts | default list) -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "reloader-lib.fullname" . }}
  namespace: {{ include "reloader-lib.namespace" . }}
  labels:
    {{- include "reloader-lib.labels" . | nindent 4 }}
    {{- include "reloader-lib.tplMap" (dict "map" $d.labels "root" $ "indent" 4) }}
  {{- with $d.annotations }}
  annotations:
    {{- include "reloader-lib.tplMap" (dict "map" . "root" $ "indent" 4) }}
  {{- end }}
spec:
  replicas: {{ $d.replicas }}
  revisionHistoryLimit: {{ $d.revisionHistoryLimit }}
  strategy:
    {{- include "reloader-lib.strategy" . | nindent 4 }}
  selector:
    matchLabels:
      {{- include "reloader-lib.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "reloader-lib.labels" . | nindent 8 }}
        {{- include "reloader-lib.tplMap" (dict "map" $d.labels "root" $ "indent" 8) }}
      {{- with $d.pod.annotations }}
      annotations:
        {{- include "reloader-lib.tplMap" (dict "map" . "root" $ "indent" 8) }}
      {{- end }}
    spec:
      serviceAccountName: {{ include "reloader-lib.serviceAccountName" . }}
      {{- /* The ServiceAccount does not mount its token by default; this pod is the one that needs it. */}}
      automountServiceAccountToken: {{ if hasKey $d "automountServiceAccountToken" }}{{ $d.automountServiceAccountToken }}{{ else }}true{{ end }}
      {{- with (include "reloader-lib.imagePullSecrets" . | trim) }}
      imagePullSecrets:
        {{- . | nindent 8 }}
      {{- end }}
      {{- if kindIs "bool" $d.hostUsers }}
      hostUsers: {{ $d.hostUsers }}
      {{- end }}
      {{- with $d.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- with $d.runtimeClassName }}
      runtimeClassName: {{ . }}
      {{- end }}
      {{- with $d.schedulerName }}
      schedulerName: {{ . }}
      {{- end }}
      {{- with $d.dnsConfig }}
      dnsConfig:
        {{- toYaml . | nindent 8 }}
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
        {{- /* Named like the Deployment, as in stakater's chart: VPA policies and dashboards select it by name. */}}
        - name: {{ include "reloader-lib.fullname" . }}
          image: {{ include "reloader-lib.image" . | quote }}
          imagePullPolicy: {{ .Values.image.pullPolicy }}
          {{- with (include "reloader-lib.args" . | trim) }}
          args:
            {{- . | nindent 12 }}
          {{- end }}
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
          {{- if or $r.readOnlyRootFileSystem $volumeMounts }}
          volumeMounts:
            {{- if $r.readOnlyRootFileSystem }}
            - name: tmp
              mountPath: /tmp
            {{- end }}
            {{- with $volumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          {{- end }}
      {{- if or $r.readOnlyRootFileSystem $volumes }}
      volumes:
        {{- if $r.readOnlyRootFileSystem }}
        - name: tmp
          emptyDir: {}
        {{- end }}
        {{- with $volumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- end }}
{{- end -}}

{{- define "reloader-lib.serviceAccount" -}}
{{- $sa := .Values.reloader.serviceAccount -}}
{{- if $sa.create -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "reloader-lib.serviceAccountName" . }}
  namespace: {{ include "reloader-lib.namespace" . }}
  labels:
    {{- include "reloader-lib.labels" . | nindent 4 }}
    {{- include "reloader-lib.tplMap" (dict "map" $sa.labels "root" $ "indent" 4) }}
  {{- with $sa.annotations }}
  annotations:
    {{- include "reloader-lib.tplMap" (dict "map" . "root" $ "indent" 4) }}
  {{- end }}
{{- /* Only the Reloader pod gets a token; anything else scheduled with this account does not. */}}
automountServiceAccountToken: {{ if hasKey $sa "automountServiceAccountToken" }}{{ $sa.automountServiceAccountToken }}{{ else }}false{{ end }}
{{- with .Values.global.imagePullSecrets }}
imagePullSecrets:
  {{- include "reloader-lib.imagePullSecrets" $ | trim | nindent 2 }}
{{- end }}
{{- end -}}
{{- end -}}
