{{/* Names and labels shared by every template. */}}

{{- define "bastion.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "bastion.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "bastion.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "bastion.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "bastion.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{ include "bastion.selectorLabels" . }}
{{- end }}

{{/* The manager's pods; the runners' NetworkPolicy allows egress to them. */}}
{{- define "bastion.selectorLabels" -}}
app.kubernetes.io/name: {{ include "bastion.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: manager
{{- end }}

{{- define "bastion.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "bastion.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "bastion.image" -}}
{{- printf "%s:%s" .repository (default .appVersion .tag) }}
{{- end }}

{{- define "bastion.runnerImage" -}}
{{- $img := index .root.Values.runner.images .app }}
{{- printf "%s:%s" $img.repository (default .root.Chart.AppVersion $img.tag) }}
{{- end }}

{{/* The address runners stream to: the Service, inside the cluster. */}}
{{- define "bastion.runnerURL" -}}
{{- if .Values.runnerURL }}
{{- .Values.runnerURL }}
{{- else }}
{{- printf "http://%s.%s.svc:%d" (include "bastion.fullname" .) .Release.Namespace (int .Values.service.port) }}
{{- end }}
{{- end }}

{{- define "bastion.publicURL" -}}
{{- if or .Values.externalURL .Values.publicURL }}
{{- .Values.externalURL | default .Values.publicURL }}
{{- else if .Values.ingress.enabled }}
{{- printf "%s://%s" (ternary "https" "http" (ne .Values.ingress.tlsSecretName "")) .Values.ingress.host }}
{{- end }}
{{- end }}

{{- define "bastion.adminSecretName" -}}
{{- default (printf "%s-initial-admin" (include "bastion.fullname" .)) .Values.initialAdmin.existingSecret }}
{{- end }}

{{- define "bastion.postgresSecretName" -}}
{{- default (printf "%s-store" (include "bastion.fullname" .)) .Values.store.postgres.existingSecret }}
{{- end }}

{{/*
The manager's replicas: replicas, else replicaCount (its old name, which
an upgrade with --reuse-values carries over from an older chart), else 2
on PostgreSQL and 1 on SQLite.
*/}}
{{- define "bastion.replicas" -}}
{{- if not (kindIs "invalid" .Values.replicas) }}
{{- int .Values.replicas }}
{{- else if not (kindIs "invalid" .Values.replicaCount) }}
{{- int .Values.replicaCount }}
{{- else }}
{{- ternary 2 1 (eq .Values.store.type "postgres") }}
{{- end }}
{{- end }}

{{/* shutdownDelaySeconds as a number (bastion.validate checks its text
first: a --set value with a leading zero stays a string). */}}
{{- define "bastion.shutdownDelay" -}}
{{- atoi (toString .Values.shutdownDelaySeconds) }}
{{- end }}

{{/* Settings that cannot work together fail the render, with the fix. */}}
{{- define "bastion.validate" -}}
{{- if not (has .Values.store.type (list "sqlite" "postgres")) }}
{{- fail (printf "store.type must be sqlite or postgres, not %q" .Values.store.type) }}
{{- end }}
{{- $replicas := int (include "bastion.replicas" .) }}
{{- if and (gt $replicas 1) (eq .Values.store.type "sqlite") }}
{{- fail (printf "replicas=%d needs store.type=postgres: the SQLite file is on one ReadWriteOnce volume, which one manager writes (set replicas=1, or use PostgreSQL)" $replicas) }}
{{- end }}
{{- if and (gt $replicas 1) (not .Values.leaderElection) }}
{{- fail (printf "replicas=%d needs leaderElection=true: only one replica may run the controllers" $replicas) }}
{{- end }}
{{- if and (eq .Values.store.type "postgres") (not .Values.store.postgres.existingSecret) (not .Values.store.postgres.dsn) }}
{{- fail "store.type=postgres needs store.postgres.existingSecret (a Secret with the DSN) or store.postgres.dsn" }}
{{- end }}
{{- if not (regexMatch "^([0-9]|[1-5][0-9]|60)$" (toString .Values.shutdownDelaySeconds)) }}
{{- fail (printf "shutdownDelaySeconds must be a whole number of seconds from 0 to 60, not %v" .Values.shutdownDelaySeconds) }}
{{- end }}
{{- if and .Values.ingress.enabled (not .Values.ingress.host) }}
{{- fail "ingress.enabled needs ingress.host" }}
{{- end }}
{{- range .Values.oidc.providers }}
{{- if or (not .id) (not .issuer) (not .clientID) (not .clientSecretRef) }}
{{- fail "each oidc.providers entry needs id, issuer, clientID and clientSecretRef {name, key}" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The projected-volume sources of the alerts' secrets (SMTP password,
Telegram bot token, chat webhook URL); empty when no alert needs one.
*/}}
{{- define "bastion.alertSecrets" -}}
{{- with .Values.alerts -}}
{{- if and .email.enabled .email.passwordSecret }}
- secret:
    name: {{ .email.passwordSecret }}
    items: [{key: {{ .email.passwordKey }}, path: smtp-password}]
{{- end }}
{{- if .telegram.enabled }}
- secret:
    name: {{ required "alerts.telegram.tokenSecret is required when alerts.telegram.enabled" .telegram.tokenSecret }}
    items: [{key: {{ .telegram.tokenKey }}, path: telegram-token}]
{{- end }}
{{- if .chatWebhook.enabled }}
- secret:
    name: {{ required "alerts.chatWebhook.urlSecret is required when alerts.chatWebhook.enabled" .chatWebhook.urlSecret }}
    items: [{key: {{ .chatWebhook.urlKey }}, path: chat-webhook-url}]
{{- end }}
{{- end }}
{{- end }}

{{/* The ClusterRole of Secrets, ConfigMaps and Jobs, bound per namespace. */}}
{{- define "bastion.namespaceRole" -}}
{{ include "bastion.fullname" . }}-namespace
{{- end }}
