{{- define "weft.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "weft.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "weft.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "weft.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The selector of every weft pod; a role's adds app.kubernetes.io/component. */}}
{{- define "weft.selectorLabels" -}}
app.kubernetes.io/name: {{ include "weft.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "weft.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The roles this release runs: "all" (lite), or "api" and "worker" (split). */}}
{{- define "weft.roles" -}}
{{- if eq .Values.mode "lite" -}}all{{- else -}}api worker{{- end -}}
{{- end -}}

{{/* The roles that serve the doors' HTTP. */}}
{{- define "weft.httpRole" -}}
{{- if eq .Values.mode "lite" -}}all{{- else -}}api{{- end -}}
{{- end -}}

{{/* Env and secrets every weft container gets ("role" set by the caller). */}}
{{- define "weft.env" -}}
env:
  - name: WEFT_ROLE
    value: {{ .role | quote }}
  - name: WEFT_ADDR
    value: {{ printf ":%d" (int .root.Values.ports.http) | quote }}
  - name: WEFT_METRICS_ADDR
    value: {{ printf ":%d" (int .root.Values.ports.metrics) | quote }}
  - name: WEFT_SHUTDOWN_TIMEOUT
    value: {{ .root.Values.shutdownTimeout | quote }}
  {{- range $k, $v := .root.Values.env }}
  - name: {{ $k }}
    value: {{ $v | toString | quote }}
  {{- end }}
envFrom:
  - secretRef:
      name: {{ required "existingSecret: the Secret holding DATABASE_URL and weft's other secrets" .root.Values.existingSecret }}
{{- end -}}

{{/* terminationGracePeriodSeconds must outlast the drain. */}}
{{- define "weft.checkGrace" -}}
{{- $d := .Values.shutdownTimeout | toString -}}
{{- $secs := 0 -}}
{{- if hasSuffix "m" $d -}}{{- $secs = mul (trimSuffix "m" $d | int) 60 -}}
{{- else if hasSuffix "s" $d -}}{{- $secs = trimSuffix "s" $d | int -}}
{{- else -}}{{- fail "shutdownTimeout: write it in whole seconds or minutes (30s, 2m)" -}}
{{- end -}}
{{- if le (int .Values.terminationGracePeriodSeconds) $secs -}}
{{- fail (printf "terminationGracePeriodSeconds (%d) must be longer than shutdownTimeout (%s)" (int .Values.terminationGracePeriodSeconds) $d) -}}
{{- end -}}
{{- end -}}
