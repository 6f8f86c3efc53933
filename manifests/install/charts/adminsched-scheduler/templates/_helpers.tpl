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

{{/* The namespace of the leader-election lease. */}}
{{- define "adminsched-scheduler.leaseNamespace" -}}
{{- .Values.leaderElection.resourceNamespace | default .Release.Namespace }}
{{- end }}

{{/* The ServiceAccount as an RBAC subject. */}}
{{- define "adminsched-scheduler.subject" -}}
- kind: ServiceAccount
  name: {{ include "adminsched-scheduler.fullname" . }}
  namespace: {{ .Release.Namespace }}
{{- end }}
