{{/*
The OnDemandShare controller's objects (onDemandShare.controller.enabled):
the prefix of their names, "<fullname>-ondemandshare-controller".
*/}}
{{- define "adminsched-scheduler.onDemandShare.name" -}}
{{- printf "%s-ondemandshare-controller" (include "adminsched-scheduler.fullname" .) }}
{{- end }}

{{/*
Labels of a controller object. Not the scheduler's selector labels: the
scheduler's Deployment and PodDisruptionBudget must not select its pods.
*/}}
{{- define "adminsched-scheduler.onDemandShare.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "adminsched-scheduler.onDemandShare.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.onDemandShare.controller.image.tag | default .Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: adminsched-scheduler-plugins
{{- end }}

{{/* Labels the controller's Deployment, PodDisruptionBudget and Service select its pods by. */}}
{{- define "adminsched-scheduler.onDemandShare.selectorLabels" -}}
app.kubernetes.io/name: ondemandshare-controller
app.kubernetes.io/instance: {{ .Release.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The controller's ServiceAccount as an RBAC subject. */}}
{{- define "adminsched-scheduler.onDemandShare.subject" -}}
- kind: ServiceAccount
  name: {{ include "adminsched-scheduler.onDemandShare.name" . }}
  namespace: {{ .Release.Namespace }}
{{- end }}

{{/*
The objects of the admission-policy hook Jobs (render --apply after install
and upgrade, render --delete before uninstall): "<fullname>-ondemandshare-admission".
*/}}
{{- define "adminsched-scheduler.onDemandShare.admissionName" -}}
{{- printf "%s-ondemandshare-admission" (include "adminsched-scheduler.fullname" .) }}
{{- end }}

{{/*
Labels of a hook object: not the controller's selector labels, which its
Deployment, PodDisruptionBudget and Service select by.
*/}}
{{- define "adminsched-scheduler.onDemandShare.admissionLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: ondemandshare-admission
app.kubernetes.io/instance: {{ .Release.Name | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/version: {{ .Values.onDemandShare.controller.image.tag | default .Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: adminsched-scheduler-plugins
{{- end }}
