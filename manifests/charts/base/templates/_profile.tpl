{{- define "istio.applyProfile" -}}
{{- $root := . -}}
{{- if hasKey .Values "defaults" -}}
{{- fail (printf "values under 'defaults' are not read: set %s at the top level instead" (keys .Values.defaults | sortAlpha | join ", ")) -}}
{{- end -}}
{{- /* The defaults are this render's own: Helm copies a chart's values for every render. */ -}}
{{- $base := .Values._internal_defaults_do_not_set | default dict -}}
{{- $_ := unset .Values "_internal_defaults_do_not_set" -}}
{{- $layers := list -}}
{{- $profile := coalesce .Values.profile ((.Values.global | default dict).profile) -}}
{{- if $profile -}}
{{- $layers = append $layers (list "profile" $profile (printf "files/profile-%s.json" $profile)) -}}
{{- end -}}
{{- with .Values.compatibilityVersion -}}
{{- $layers = append $layers (list "compatibilityVersion" (toString .) (printf "files/profile-compatibility-version-%v.json" .)) -}}
{{- end -}}
{{- $platform := coalesce .Values.platform ((.Values.global | default dict).platform) -}}
{{- if $platform -}}
{{- $layers = append $layers (list "platform" $platform (printf "files/profile-platform-%s.json" $platform)) -}}
{{- end -}}
{{- range $layers -}}
{{- $content := $root.Files.Get (index . 2) -}}
{{- if not $content -}}
{{- fail (printf "unknown %s %q: this chart has no %s" (index . 0) (index . 1) (index . 2)) -}}
{{- end -}}
{{- $base = mustMergeOverwrite $base ($content | fromJson) -}}
{{- end -}}
{{- $_ := set .Values "_original" (deepCopy .Values) -}}
{{- $_ := set . "Values" (mustMergeOverwrite $base .Values) -}}
{{- end -}}

{{- /* Labels every object of the chart carries. */ -}}
{{- define "istio.labels" -}}
app.kubernetes.io/managed-by: {{ .Release.Service | default "Helm" | quote }}
app.kubernetes.io/instance: {{ include "istio.releaseLabel" . | quote }}
app.kubernetes.io/part-of: "istio"
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{- /* Value of the release and app.kubernetes.io/instance labels: the Helm release's name,
   unless global.releaseLabel names another (istioctl manifest translate sets it to istio,
   the name istioctl renders every chart with, so that objects moved under Helm keep
   their labels and their pods are not rolled). */ -}}
{{- define "istio.releaseLabel" -}}
{{- (.Values.global | default dict).releaseLabel | default .Release.Name -}}
{{- end -}}
