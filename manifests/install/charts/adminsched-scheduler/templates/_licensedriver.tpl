{{/*
The license driver's objects (licenseDriver.enabled): the prefix of their
names, "<fullname>-license-driver".
*/}}
{{- define "adminsched-scheduler.licenseDriver.name" -}}
{{- printf "%s-license-driver" (include "adminsched-scheduler.fullname" .) }}
{{- end }}

{{/*
Labels of a license driver object; call with (list $ "controller") or
(list $ "kubelet-plugin"). Not the scheduler's selector labels: the
scheduler's Deployment and PodDisruptionBudget must not select the driver's
pods.
*/}}
{{- define "adminsched-scheduler.licenseDriver.labels" -}}
{{- $root := index . 0 -}}
helm.sh/chart: {{ printf "%s-%s" $root.Chart.Name $root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "adminsched-scheduler.licenseDriver.selectorLabels" . }}
app.kubernetes.io/version: {{ $root.Values.licenseDriver.image.tag | default $root.Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ $root.Release.Service }}
app.kubernetes.io/part-of: adminsched-scheduler-plugins
{{- end }}

{{/* Labels the driver's workloads select their pods by; (list $ role). */}}
{{- define "adminsched-scheduler.licenseDriver.selectorLabels" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: license-driver-{{ index . 1 }}
app.kubernetes.io/instance: {{ $root.Release.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* A role's ServiceAccount as an RBAC subject; (list $ role). */}}
{{- define "adminsched-scheduler.licenseDriver.subject" -}}
{{- $root := index . 0 -}}
- kind: ServiceAccount
  name: {{ include "adminsched-scheduler.licenseDriver.name" $root }}-{{ index . 1 }}
  namespace: {{ $root.Release.Namespace }}
{{- end }}

{{/* The driver's image. */}}
{{- define "adminsched-scheduler.licenseDriver.image" -}}
{{- with .Values.licenseDriver.image }}{{ .repository }}:{{ .tag | default $.Chart.AppVersion }}{{ end }}
{{- end }}
