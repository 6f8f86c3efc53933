{{/*
The MaintenanceWindow controller's objects (maintenanceController.enabled):
their name, "<fullname>-maintenancewindow-controller".
*/}}
{{- define "adminsched-scheduler.maintenanceController.name" -}}
{{- printf "%s-maintenancewindow-controller" (include "adminsched-scheduler.fullname" .) }}
{{- end }}

{{/*
Labels of a controller object. Not the scheduler's selector labels: the
scheduler's Deployment and PodDisruptionBudget must not select its pods.
*/}}
{{- define "adminsched-scheduler.maintenanceController.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "adminsched-scheduler.maintenanceController.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.maintenanceController.image.tag | default .Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: adminsched-scheduler-plugins
{{- end }}

{{/* Labels the controller's Deployment, PodDisruptionBudget and Service select its pods by. */}}
{{- define "adminsched-scheduler.maintenanceController.selectorLabels" -}}
app.kubernetes.io/name: maintenancewindow-controller
app.kubernetes.io/instance: {{ .Release.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The controller's ServiceAccount as an RBAC subject. */}}
{{- define "adminsched-scheduler.maintenanceController.subject" -}}
- kind: ServiceAccount
  name: {{ include "adminsched-scheduler.maintenanceController.name" . }}
  namespace: {{ .Release.Namespace }}
{{- end }}
