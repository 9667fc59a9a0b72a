{{- /* Name of the DaemonSet, ServiceAccount and RBAC objects. */ -}}
{{- define "ztunnel.objName" -}}{{ .Values.resourceName | default "ztunnel" }}{{- end }}

{{- /* Standard Kubernetes/Helm labels, plus app.kubernetes.io/name, as YAML lines. The label
   helpers write their lines rather than build a dict for toYaml (and read another's back
   with fromYaml): each toYaml or fromYaml costs a render some 12-40 KB of fresh memory. */ -}}
{{- define "ztunnel.stdLabels" -}}
app.kubernetes.io/part-of: istio
app.kubernetes.io/name: ztunnel
{{- with .Release.Service }}
app.kubernetes.io/managed-by: {{ toJson . }}
{{- end }}
{{- with include "istio.releaseLabel" . }}
app.kubernetes.io/instance: {{ toJson . }}
{{- end }}
{{- with .Chart.AppVersion }}
app.kubernetes.io/version: {{ toJson . }}
{{- end }}
{{- if and .Chart.Name .Chart.Version }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" | toJson }}
{{- end }}
{{- end }}

{{- /* Labels of the DaemonSet, ServiceAccount and ResourceQuota: standard ones plus .Values.labels. */ -}}
{{- define "ztunnel.objLabels" -}}
{{- include "ztunnel.mergedLines" (dict "base" (include "ztunnel.stdLabels" .) "extra" .Values.labels) }}
{{- end }}

{{- /* Labels of the OpenShift RBAC objects. */ -}}
{{- define "ztunnel.rbacLabels" -}}
{{ include "ztunnel.stdLabels" . }}
app: ztunnel
release: {{ include "ztunnel.objName" . | toJson }}
install.operator.istio.io/owning-resource: {{ .Values.ownerName | default "unknown" | toString | toJson }}
{{- end }}

{{- /* Annotations of the top-level objects: .Values.annotations, plus istio.io/rev for a revision. */ -}}
{{- define "ztunnel.objAnnotations" -}}
{{- if .Values.annotations }}
{{- $a := deepCopy .Values.annotations }}
{{- with .Values.revision }}{{ $_ := set $a "istio.io/rev" (toString .) }}{{ end }}
{{- toYaml $a }}
{{- else if .Values.revision }}istio.io/rev: {{ toString .Values.revision | toJson }}
{{- else }}{}
{{- end }}
{{- end }}

{{- /* The YAML lines of .base with the map .extra laid over them by mustMergeOverwrite;
   .base itself when .extra is empty (the usual case), without a toYaml. */ -}}
{{- define "ztunnel.mergedLines" -}}
{{- if .extra }}{{ toYaml (mustMergeOverwrite (fromYaml .base) (deepCopy .extra)) }}{{ else }}{{ .base }}{{ end }}
{{- end }}

{{- /* Whether namespaced / cluster-scoped objects are in the chosen resourceScope ("true" or ""). */ -}}
{{- define "ztunnel.inScope.namespaced" -}}
{{- if has .Values.resourceScope (list "all" "namespace") }}true{{ end }}
{{- end }}
{{- define "ztunnel.inScope.cluster" -}}
{{- if has .Values.resourceScope (list "all" "cluster") }}true{{ end }}
{{- end }}

{{- /* istiod address used for CA and XDS when none is configured. */ -}}
{{- define "ztunnel.istiodAddress" -}}
{{- $suffix := "" }}
{{- with .Values.revision }}{{ $suffix = printf "-%v" . }}{{ end }}
{{- printf "istiod%s.%v.svc:15012" $suffix .Values.istioNamespace }}
{{- end }}

{{- /*
Resource requirements with empty entries dropped: a quantity that is unset/empty is left out,
and limits/requests with nothing left are left out. Takes the resources map; renders a YAML map.
*/ -}}
{{- define "ztunnel.resources" -}}
{{- range $section := list "limits" "requests" }}
{{- $kept := dict }}
{{- range $res, $qty := (index $ $section | default dict) }}
{{- if $qty }}{{ $_ := set $kept $res $qty }}{{ end }}
{{- end }}
{{- if $kept }}
{{ $section }}:
{{- /* quantities are written as given (unquoted), like a hand-written manifest */}}
{{- range $res, $qty := $kept }}
  {{ $res }}: {{ $qty }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{- /* Value of the release and app.kubernetes.io/instance labels: the Helm release's name,
   unless global.releaseLabel names another (istioctl manifest translate sets it to istio,
   the name istioctl renders every chart with, so that objects moved under Helm keep
   their labels and their pods are not rolled). */ -}}
{{- define "istio.releaseLabel" -}}
{{- (.Values.global | default dict).releaseLabel | default .Release.Name -}}
{{- end -}}
