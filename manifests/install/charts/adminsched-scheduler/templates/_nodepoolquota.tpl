{{/*
The NodePoolQuota controller's objects (nodePoolQuota.controller.enabled):
their name, "<fullname>-nodepoolquota-controller".
*/}}
{{- define "adminsched-scheduler.nodePoolQuota.name" -}}
{{- printf "%s-nodepoolquota-controller" (include "adminsched-scheduler.fullname" .) }}
{{- end }}

{{/*
The gate's MutatingAdmissionPolicy and binding, cluster-scoped: the
fullname keeps two releases' policies apart.
*/}}
{{- define "adminsched-scheduler.nodePoolQuota.gateName" -}}
{{- printf "%s-nodepoolquota-gate" (include "adminsched-scheduler.fullname" .) }}
{{- end }}

{{/*
Labels of a controller object. Not the scheduler's selector labels: the
scheduler's Deployment and PodDisruptionBudget must not select its pods.
*/}}
{{- define "adminsched-scheduler.nodePoolQuota.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "adminsched-scheduler.nodePoolQuota.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.nodePoolQuota.controller.image.tag | default .Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: adminsched-scheduler-plugins
{{- end }}

{{/* Labels the controller's Deployment, PodDisruptionBudget and Service select its pods by. */}}
{{- define "adminsched-scheduler.nodePoolQuota.selectorLabels" -}}
app.kubernetes.io/name: nodepoolquota-controller
app.kubernetes.io/instance: {{ .Release.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The controller's ServiceAccount as an RBAC subject. */}}
{{- define "adminsched-scheduler.nodePoolQuota.subject" -}}
- kind: ServiceAccount
  name: {{ include "adminsched-scheduler.nodePoolQuota.name" . }}
  namespace: {{ .Release.Namespace }}
{{- end }}
