{{- /* ------------------------------------------------------------------ names */ -}}

{{- /* "-<revision>" for a named revision, empty for the default one. */ -}}
{{- define "istiod.revSuffix" -}}
{{- with .Values.revision }}-{{ . }}{{ end -}}
{{- end -}}

{{- /* Value of the istio.io/rev label. */ -}}
{{- define "istiod.revLabel" -}}
{{- .Values.revision | default "default" -}}
{{- end -}}

{{- /* Name shared by the Deployment, Service, ServiceAccount, Role, HPA and PDB. */ -}}
{{- define "istiod.fullname" -}}
istiod{{ include "istiod.revSuffix" . }}
{{- end -}}

{{- /* Suffix of cluster-scoped RBAC names: [-<revision>]-<release namespace>. */ -}}
{{- define "istiod.clusterSuffix" -}}
{{ include "istiod.revSuffix" . }}-{{ .Release.Namespace }}
{{- end -}}

{{- /* ----------------------------------------------------------------- labels */ -}}

{{- /* Helm/Kubernetes recommended labels carried by every object. */ -}}
{{- define "istiod.commonLabels" -}}
app.kubernetes.io/part-of: "istio"
{{- with .Release.Service }}
app.kubernetes.io/managed-by: {{ . | quote }}
{{- end }}
{{- with include "istio.releaseLabel" . }}
app.kubernetes.io/instance: {{ . | quote }}
{{- end }}
{{- with .Chart.AppVersion }}
app.kubernetes.io/version: {{ . | quote }}
{{- end }}
{{- if and .Chart.Name .Chart.Version }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end -}}

{{- /* Labels identifying objects that belong to the Pilot component of a revision. */ -}}
{{- define "istiod.componentLabels" -}}
istio.io/rev: {{ include "istiod.revLabel" . | quote }}
install.operator.istio.io/owning-resource: {{ .Values.ownerName | default "unknown" }}
operator.istio.io/component: "Pilot"
{{- end -}}

{{- /* ------------------------------------------------------- rendering gates */ -}}
{{- /* Each returns "true" or an empty string. */ -}}

{{- /* global.resourceScope allows namespaced objects. */ -}}
{{- define "istiod.renderNamespaced" -}}
{{- if has .Values.global.resourceScope (list "all" "namespace") }}true{{ end -}}
{{- end -}}

{{- /* global.resourceScope allows cluster-scoped objects. */ -}}
{{- define "istiod.renderClusterScoped" -}}
{{- if has .Values.global.resourceScope (list "all" "cluster") }}true{{ end -}}
{{- end -}}

{{- /* istiod itself runs in this cluster (not remote, or remote with a local injector istiod). */ -}}
{{- define "istiod.runsHere" -}}
{{- $r := .Values.istiodRemote -}}
{{- if or (not $r.enabled) $r.enabledLocalInjectorIstiod }}true{{ end -}}
{{- end -}}

{{- /* istiod needs its identity and permissions in this cluster: it runs here, or this
       remote cluster is the config cluster. */ -}}
{{- define "istiod.needsIdentity" -}}
{{- $r := .Values.istiodRemote -}}
{{- if or (not $r.enabled) .Values.global.configCluster $r.enabledLocalInjectorIstiod }}true{{ end -}}
{{- end -}}

{{- /* ---------------------------------------------------------------- misc */ -}}

{{- /* Resource requirements with empty entries dropped. Takes the resources map. */ -}}
{{- define "istiod.containerResources" -}}
{{- $out := dict }}
{{- range $section := list "limits" "requests" }}
{{- $kept := dict }}
{{- range $name, $qty := (index $ $section | default dict) }}
{{- if $qty }}{{ $_ := set $kept $name $qty }}{{ end }}
{{- end }}
{{- if $kept }}{{ $_ := set $out $section $kept }}{{ end }}
{{- end }}
{{- if $out }}{{ toYaml $out }}{{ end }}
{{- end -}}

{{- /* Webhook selector value list for this revision. */ -}}
{{- define "istiod.webhookRevisionValues" -}}
- {{ include "istiod.revLabel" . | quote }}
{{- end -}}

{{- /* Value of the release and app.kubernetes.io/instance labels: the Helm release's name,
   unless global.releaseLabel names another (istioctl manifest translate sets it to istio,
   the name istioctl renders every chart with, so that objects moved under Helm keep
   their labels and their pods are not rolled). */ -}}
{{- define "istio.releaseLabel" -}}
{{- (.Values.global | default dict).releaseLabel | default .Release.Name -}}
{{- end -}}
