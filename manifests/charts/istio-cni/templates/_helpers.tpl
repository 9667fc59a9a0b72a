{{- /* Base name shared by every object of this chart. */ -}}
{{- define "cni.base" -}}istio-cni{{- end }}

{{- /* Standard Kubernetes/Helm labels carried by all objects. */ -}}
{{- define "cni.stdLabels" -}}
{{- $l := dict "app.kubernetes.io/part-of" "istio" }}
{{- with .Release.Service }}{{ $_ := set $l "app.kubernetes.io/managed-by" . }}{{ end }}
{{- with include "istio.releaseLabel" . }}{{ $_ := set $l "app.kubernetes.io/instance" . }}{{ end }}
{{- with .Chart.AppVersion }}{{ $_ := set $l "app.kubernetes.io/version" . }}{{ end }}
{{- if and .Chart.Name .Chart.Version }}
{{- $_ := set $l "helm.sh/chart" (printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-") }}
{{- end }}
{{- $_ := set $l "app.kubernetes.io/name" (include "cni.base" .) }}
{{- toYaml $l }}
{{- end }}

{{- /* Installer bookkeeping labels (revision, owner, component), plus the standard ones. */ -}}
{{- define "cni.ownedLabels" -}}
{{- $l := fromYaml (include "cni.stdLabels" .) }}
{{- $_ := set $l "release" (include "istio.releaseLabel" .) }}
{{- $_ = set $l "istio.io/rev" (.Values.revision | default "default" | toString) }}
{{- $_ = set $l "install.operator.istio.io/owning-resource" (.Values.ownerName | default "unknown" | toString) }}
{{- $_ = set $l "operator.istio.io/component" "Cni" }}
{{- toYaml $l }}
{{- end }}

{{- /* Labels for the objects grouped under the "app" key. */ -}}
{{- define "cni.appLabels" -}}
{{- $l := fromYaml (include "cni.ownedLabels" .) }}
{{- $_ := set $l "app" (include "cni.base" .) }}
{{- toYaml $l }}
{{- end }}

{{- /* Labels for the node agent DaemonSet and its companions (k8s-app key). */ -}}
{{- define "cni.nodeLabels" -}}
{{- $l := fromYaml (include "cni.ownedLabels" .) }}
{{- $_ := set $l "k8s-app" (printf "%s-node" (include "cni.base" .)) }}
{{- toYaml $l }}
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
