{{/*
The descheduler's objects (descheduler.enabled): the prefix of their names,
"<fullname>-descheduler".
*/}}
{{- define "adminsched-scheduler.descheduler.name" -}}
{{- printf "%s-descheduler" (include "adminsched-scheduler.fullname" .) }}
{{- end }}

{{/*
Labels of a descheduler object. Not the scheduler's selector labels: the
scheduler's Deployment and PodDisruptionBudget must not select its pods.
*/}}
{{- define "adminsched-scheduler.descheduler.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "adminsched-scheduler.descheduler.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.descheduler.image.tag | default .Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: adminsched-scheduler-plugins
{{- end }}

{{/* Labels the descheduler's Deployment selects its pods by. */}}
{{- define "adminsched-scheduler.descheduler.selectorLabels" -}}
app.kubernetes.io/name: descheduler
app.kubernetes.io/instance: {{ .Release.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The descheduler's ServiceAccount as an RBAC subject. */}}
{{- define "adminsched-scheduler.descheduler.subject" -}}
- kind: ServiceAccount
  name: {{ include "adminsched-scheduler.descheduler.name" . }}
  namespace: {{ .Release.Namespace }}
{{- end }}

{{/*
The DeschedulerPolicy: descheduler.policy names a shipped policy
(files/descheduler/<name>-policy.yaml, the text of
manifests/descheduler/<name>-policy.yaml), or is one, inline.
*/}}
{{- define "adminsched-scheduler.descheduler.policy" -}}
{{- $policy := .Values.descheduler.policy }}
{{- if kindIs "string" $policy }}
{{- $file := printf "files/descheduler/%s-policy.yaml" $policy }}
{{- $text := .Files.Get $file }}
{{- if not $text }}
{{- fail (printf "descheduler.policy: %q is no shipped policy (spread, consolidate, maintenance); or give a DeschedulerPolicy inline" $policy) }}
{{- end }}
{{- $text }}
{{- else }}
{{- toYaml $policy }}
{{- end }}
{{- end }}
