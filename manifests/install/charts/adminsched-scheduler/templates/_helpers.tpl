{{/* The chart name, or nameOverride. */}}
{{- define "adminsched-scheduler.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The prefix of every object name: fullnameOverride, or the release name plus
the chart name unless the release name already contains it. At most 52
characters, so that "<prefix>-leader-election" and the like stay valid.
*/}}
{{- define "adminsched-scheduler.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- $name := include "adminsched-scheduler.name" . }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "adminsched-scheduler.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "adminsched-scheduler.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: adminsched-scheduler-plugins
{{- end }}

{{/* Labels the Deployment, PodDisruptionBudget and Service select pods by. */}}
{{- define "adminsched-scheduler.selectorLabels" -}}
app.kubernetes.io/name: {{ include "adminsched-scheduler.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
config.raw parsed, or an empty dict without it. A config that is not YAML
fails here, naming the value.
*/}}
{{- define "adminsched-scheduler.rawConfig" -}}
{{- if and .Values.config.raw .Values.config.existingConfigMap }}
{{- fail "config: set raw or existingConfigMap, not both" }}
{{- end }}
{{- $raw := dict }}
{{- if .Values.config.raw }}
{{- $raw = fromYaml .Values.config.raw }}
{{- if hasKey $raw "Error" }}
{{- fail (printf "config.raw: not a YAML object: %s" (get $raw "Error")) }}
{{- end }}
{{- if or (ne (get $raw "apiVersion" | toString) "kubescheduler.config.k8s.io/v1") (ne (get $raw "kind" | toString) "KubeSchedulerConfiguration") }}
{{- fail "config.raw: must be a KubeSchedulerConfiguration of apiVersion kubescheduler.config.k8s.io/v1" }}
{{- end }}
{{- end }}
{{- toYaml $raw }}
{{- end }}

{{/*
The scheduler's leader election (leaderElect, resourceName,
resourceNamespace) as YAML: config.raw's own, or the values' with the lease
named after the release (the fullname), so that releases in one namespace
never share a lease. A raw config must name its lease: kube-scheduler's
default is the default scheduler's kube-system/kube-scheduler.
*/}}
{{- define "adminsched-scheduler.leaderElection" -}}
{{- $le := dict }}
{{- if .Values.config.raw }}
{{- $raw := include "adminsched-scheduler.rawConfig" . | fromYaml }}
{{- $rawLE := get $raw "leaderElection" | default dict }}
{{- $_ := set $le "leaderElect" (ternary true $rawLE.leaderElect (kindIs "invalid" $rawLE.leaderElect)) }}
{{- if $le.leaderElect }}
{{- $_ := set $le "resourceName" (required "config.raw: leaderElection.resourceName must be set (the default, kube-scheduler, is the default scheduler's lease)" $rawLE.resourceName) }}
{{- $_ := set $le "resourceNamespace" (required "config.raw: leaderElection.resourceNamespace must be set (the chart's Role on the lease goes there)" $rawLE.resourceNamespace) }}
{{- else }}
{{- $_ := set $le "resourceName" ($rawLE.resourceName | default (include "adminsched-scheduler.fullname" .)) }}
{{- $_ := set $le "resourceNamespace" ($rawLE.resourceNamespace | default .Release.Namespace) }}
{{- end }}
{{- else }}
{{- $_ := set $le "leaderElect" .Values.leaderElection.leaderElect }}
{{- $_ := set $le "resourceName" (.Values.leaderElection.resourceName | default (include "adminsched-scheduler.fullname" .)) }}
{{- $_ := set $le "resourceNamespace" (.Values.leaderElection.resourceNamespace | default .Release.Namespace) }}
{{- end }}
{{- if eq (toString $le.resourceName) "kube-scheduler" }}
{{- fail (include "adminsched-scheduler.defaultLeaseError" .) }}
{{- end }}
{{- toYaml $le }}
{{- end }}

{{/*
Why the lease kube-scheduler is refused, by where the name came from. The
Role grants get and update on the lease's name, so it is refused with or
without leaderElect: the schema checks no value against it, so that this
message, not a bare 'not' failed, is what the user reads.
*/}}
{{- define "adminsched-scheduler.defaultLeaseError" -}}
{{- if .Values.config.raw -}}
config.raw: leaderElection.resourceName "kube-scheduler" is the default scheduler's lease (kube-system/kube-scheduler), which this scheduler must not take; name a lease of its own
{{- else if .Values.leaderElection.resourceName -}}
leaderElection.resourceName: "kube-scheduler" is the default scheduler's lease (kube-system/kube-scheduler), which this scheduler must not take; set another name, or leave it empty for the release's fullname
{{- else -}}
leaderElection.resourceName: empty, so the lease is named after the release's fullname, "kube-scheduler": that is the default scheduler's lease; set leaderElection.resourceName, or another release name or fullnameOverride
{{- end -}}
{{- end }}

{{/* The name of the leader-election lease. */}}
{{- define "adminsched-scheduler.leaseName" -}}
{{- (include "adminsched-scheduler.leaderElection" . | fromYaml).resourceName }}
{{- end }}

{{/* The namespace of the leader-election lease. */}}
{{- define "adminsched-scheduler.leaseNamespace" -}}
{{- (include "adminsched-scheduler.leaderElection" . | fromYaml).resourceNamespace }}
{{- end }}

{{/*
The profiles of the config as a YAML list: profiles, or the single profile
of schedulerName, plugins and pluginConfig (the values of chart 0.37.0).
Two profiles with one schedulerName fail here: the scheduler would refuse
the config at start-up.
*/}}
{{- define "adminsched-scheduler.profiles" -}}
{{- $profiles := .Values.profiles }}
{{- if not $profiles }}
{{- $profiles = list (dict "schedulerName" .Values.schedulerName "plugins" .Values.plugins "pluginConfig" .Values.pluginConfig) }}
{{- end }}
{{- $seen := dict }}
{{- range $i, $p := $profiles }}
{{- if eq (toString $p.schedulerName) "default-scheduler" }}
{{- fail (printf "%s: \"default-scheduler\" is the default scheduler's name: both would place the same pods; name the profile otherwise (default: custom-scheduler)" (ternary (printf "profiles[%d].schedulerName" $i) "schedulerName" (gt (len $.Values.profiles) 0))) }}
{{- end }}
{{- if hasKey $seen $p.schedulerName }}
{{- fail (printf "profiles[%d].schedulerName: %q is already the name of profiles[%v]; each profile needs a schedulerName of its own" $i $p.schedulerName (get $seen $p.schedulerName)) }}
{{- end }}
{{- $_ := set $seen $p.schedulerName $i }}
{{- end }}
{{- toYaml $profiles }}
{{- end }}

{{/*
The ServiceAccount the pods run as: serviceAccount.name, or the fullname
when the chart creates it.
*/}}
{{- define "adminsched-scheduler.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- .Values.serviceAccount.name | default (include "adminsched-scheduler.fullname" .) }}
{{- else }}
{{- required "serviceAccount.name: required when serviceAccount.create is false (the existing ServiceAccount the scheduler runs as)" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The scheduler image: repository@digest when a digest is set, else repository:tag. */}}
{{- define "adminsched-scheduler.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/* The ConfigMap that holds scheduler-config.yaml. */}}
{{- define "adminsched-scheduler.configMapName" -}}
{{- .Values.config.existingConfigMap | default (printf "%s-config" (include "adminsched-scheduler.fullname" .)) }}
{{- end }}

{{/* The ServiceAccount as an RBAC subject. */}}
{{- define "adminsched-scheduler.subject" -}}
- kind: ServiceAccount
  name: {{ include "adminsched-scheduler.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
{{- end }}
