{{- /* Name of the DaemonSet, ServiceAccount and RBAC objects. */ -}}
{{- define "ztunnel.objName" -}}{{ .Values.resourceName | default "ztunnel" }}{{- end }}

{{- /* Standard Kubernetes/Helm labels, plus app.kubernetes.io/name. */ -}}
{{- define "ztunnel.stdLabels" -}}
{{- $l := dict "app.kubernetes.io/part-of" "istio" "app.kubernetes.io/name" "ztunnel" }}
{{- with .Release.Service }}{{ $_ := set $l "app.kubernetes.io/managed-by" . }}{{ end }}
{{- with include "istio.releaseLabel" . }}{{ $_ := set $l "app.kubernetes.io/instance" . }}{{ end }}
{{- with .Chart.AppVersion }}{{ $_ := set $l "app.kubernetes.io/version" . }}{{ end }}
{{- if and .Chart.Name .Chart.Version }}
{{- $_ := set $l "helm.sh/chart" (printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-") }}
{{- end }}
{{- toYaml $l }}
{{- end }}

{{- /* Labels of the DaemonSet, ServiceAccount and ResourceQuota: standard ones plus .Values.labels. */ -}}
{{- define "ztunnel.objLabels" -}}
{{- toYaml (mustMergeOverwrite (fromYaml (include "ztunnel.stdLabels" .)) (deepCopy (.Values.labels | default dict))) }}
{{- end }}

{{- /* Labels of the OpenShift RBAC objects. */ -}}
{{- define "ztunnel.rbacLabels" -}}
{{- $l := fromYaml (include "ztunnel.stdLabels" .) }}
{{- $_ := set $l "app" "ztunnel" }}
{{- $_ = set $l "release" (include "ztunnel.objName" .) }}
{{- $_ = set $l "install.operator.istio.io/owning-resource" (.Values.ownerName | default "unknown" | toString) }}
{{- toYaml $l }}
{{- end }}

{{- /* Annotations of the top-level objects: .Values.annotations, plus istio.io/rev for a revision. */ -}}
{{- define "ztunnel.objAnnotations" -}}
{{- $a := deepCopy (.Values.annotations | default dict) }}
{{- with .Values.revision }}{{ $_ := set $a "istio.io/rev" (toString .) }}{{ end }}
{{- toYaml $a }}
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
