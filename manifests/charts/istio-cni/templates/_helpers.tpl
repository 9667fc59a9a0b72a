{{- /* Base name shared by every object of this chart. */ -}}
{{- define "cni.base" -}}istio-cni{{- end }}

{{- /* Standard Kubernetes/Helm labels carried by all objects, as YAML lines. The label
   helpers write their lines rather than build a dict for toYaml (and read another's back
   with fromYaml): each toYaml or fromYaml costs a render some 12-40 KB of fresh memory. */ -}}
{{- define "cni.stdLabels" -}}
app.kubernetes.io/part-of: istio
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
app.kubernetes.io/name: {{ include "cni.base" . }}
{{- end }}

{{- /* Installer bookkeeping labels (revision, owner, component), plus the standard ones. */ -}}
{{- define "cni.ownedLabels" -}}
{{ include "cni.stdLabels" . }}
release: {{ include "istio.releaseLabel" . | toJson }}
istio.io/rev: {{ .Values.revision | default "default" | toString | toJson }}
install.operator.istio.io/owning-resource: {{ .Values.ownerName | default "unknown" | toString | toJson }}
operator.istio.io/component: Cni
{{- end }}

{{- /* Labels for the objects grouped under the "app" key. */ -}}
{{- define "cni.appLabels" -}}
{{ include "cni.ownedLabels" . }}
app: {{ include "cni.base" . }}
{{- end }}

{{- /* Labels for the node agent DaemonSet and its companions (k8s-app key). */ -}}
{{- define "cni.nodeLabels" -}}
{{ include "cni.ownedLabels" . }}
k8s-app: {{ include "cni.base" . }}-node
{{- end }}

{{- /* The YAML lines of .base with the map .extra laid over them by mustMergeOverwrite;
   .base itself when .extra is empty (the usual case), without a toYaml. */ -}}
{{- define "cni.mergedLines" -}}
{{- if .extra }}{{ toYaml (mustMergeOverwrite (fromYaml .base) .extra) }}{{ else }}{{ .base }}{{ end }}
{{- end }}

{{- /* Whether namespaced / cluster-scoped objects are in the chosen resourceScope ("true" or ""). */ -}}
{{- define "cni.inScope.namespaced" -}}
{{- if has .Values.global.resourceScope (list "all" "namespace") }}true{{ end }}
{{- end }}
{{- define "cni.inScope.cluster" -}}
{{- if has .Values.global.resourceScope (list "all" "cluster") }}true{{ end }}
{{- end }}

{{- /* Image tag with the optional variant suffix. */ -}}
{{- define "cni.imageTag" -}}
{{- $tag := .Values.tag | default .Values.global.tag | toString }}
{{- $variant := .Values.variant | default .Values.global.variant }}
{{- if $variant }}{{ printf "%s-%s" $tag $variant }}{{ else }}{{ $tag }}{{ end }}
{{- end }}

{{- /*
Resource requirements with empty entries dropped: a quantity that is unset/empty is left out,
and limits/requests with nothing left are left out. Takes the resources map; renders a YAML map.
*/ -}}
{{- define "cni.resources" -}}
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
