{{- /* ---------------------------------------------------------------------------------
   Shared helpers of the Deployment-based gateway charts (istio-ingress / istio-egress).
   Gateway settings live under .Values.gateways.<gw.valuesKey>; see _identity.tpl.
   --------------------------------------------------------------------------------- */ -}}


{{- /* Labels Helm-managed Istio objects carry everywhere. */ -}}
{{- define "gw.chartLabels" -}}
{{- if .Release.Service }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- end }}
{{- if include "istio.releaseLabel" . }}
app.kubernetes.io/instance: {{ include "istio.releaseLabel" . | quote }}
{{- end }}
app.kubernetes.io/part-of: "istio"
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
{{- if and .Chart.Name .Chart.Version }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" | quote }}
{{- end }}
{{- end -}}

{{- /* Ownership labels (release, revision, installer owner, component) shared by all objects. */ -}}
{{- define "gw.ownerLabels" -}}
release: {{ include "istio.releaseLabel" . | quote }}
istio.io/rev: {{ .Values.revision | default "default" | quote }}
install.operator.istio.io/owning-resource: {{ .Values.ownerName | default "unknown" | quote }}
operator.istio.io/component: {{ include "gw.componentName" . | quote }}
app.kubernetes.io/name: {{ include "gw.valuesKey" . | quote }}
{{- end -}}

{{- /* A flat map (labels) as the lines toYaml prints, without toYaml's cost (JSON, then
       the JSON parsed as YAML and printed again: 20 KB for five labels, a dozen times a
       render). Keys and values go through toJson, so each keeps its type. Anything but a
       non-empty map is toYaml's. */ -}}
{{- define "gw.yamlMap" -}}
{{- if and (kindIs "map" .) . }}
{{- range $k, $v := . }}
{{ $k | toJson }}: {{ $v | toJson }}
{{- end }}
{{- else }}
{{- toYaml . }}
{{- end }}
{{- end -}}

{{- /* Object labels: the gateway's own labels, then ownership and chart labels. */ -}}
{{- define "gw.objectLabels" -}}
{{- $gw := index .Values.gateways (include "gw.valuesKey" .) }}
{{- with $gw.labels }}{{ include "gw.yamlMap" . | trim }}{{ "\n" }}{{ end -}}
{{ include "gw.ownerLabels" . }}
{{ include "gw.chartLabels" . | trim }}
{{- end -}}

{{- /* "-<revision>" when a revision is set, else nothing. */ -}}
{{- define "gw.revisionSuffix" -}}
{{- if .Values.revision }}-{{ .Values.revision }}{{ end -}}
{{- end -}}

{{- /* The pod template's canonical revision label value. */ -}}
{{- define "gw.canonicalRevision" -}}
{{- $gw := index .Values.gateways (include "gw.valuesKey" .) }}
{{- $labels := $gw.labels | default dict }}
{{- index $labels "app.kubernetes.io/version" | default (index $labels "version") | default .Values.revision | default "latest" -}}
{{- end -}}

{{- /* The openshift platform lets the SCC choose the uid/gid. */ -}}
{{- define "gw.onOpenshift" -}}
{{- if eq (toString (coalesce .Values.platform (.Values.global).platform | default "")) "openshift" }}true{{ end -}}
{{- end -}}

{{- /* Proxy image reference: a full reference in global.proxy.image wins over hub/name:tag. */ -}}
{{- define "gw.proxyImage" -}}
{{- $gw := index .Values.gateways (include "gw.valuesKey" .) }}
{{- $img := .Values.global.proxy.image | default "proxyv2" | toString }}
{{- if contains "/" $img -}}
{{ $img }}
{{- else -}}
{{- $suffix := .Values.global.proxy.variant | default .Values.global.variant -}}
{{ .Values.global.hub }}/{{ $img }}:{{ $gw.tag | default .Values.global.tag }}{{ if $suffix }}-{{ $suffix }}{{ end }}
{{- end -}}
{{- end -}}

{{- /* Container resources: gateway resources, or the global defaults when unset.
       Entries whose value is empty are left out, as are empty sections. */ -}}
{{- define "gw.resources" -}}
{{- $gw := index .Values.gateways (include "gw.valuesKey" .) }}
{{- $res := $gw.resources | default .Values.global.defaultResources | default dict }}
{{- range $section := list "limits" "requests" }}
{{- $entries := index $res $section | default dict }}
{{- $kept := list }}
{{- range $name, $qty := $entries }}{{ if $qty }}{{ $kept = append $kept $name }}{{ end }}{{ end }}
{{- if $kept }}
{{ $section }}:
{{- range $name := $kept }}
  {{ $name }}: {{ index $entries $name }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{- /* Container ports opened for every configured service port, plus Envoy's Prometheus port. */ -}}
{{- define "gw.containerPorts" -}}
{{- $gw := index .Values.gateways (include "gw.valuesKey" .) }}
{{- range $gw.ports }}
- containerPort: {{ .targetPort | default .port }}
  protocol: {{ .protocol | default "TCP" }}
{{- end }}
- containerPort: 15090
  protocol: TCP
  name: http-envoy-prom
{{- end -}}

{{- /* Non-root container hardening (omitted when runAsRoot). */ -}}
{{- define "gw.containerSecurity" -}}
allowPrivilegeEscalation: false
privileged: false
readOnlyRootFilesystem: true
capabilities:
  drop:
  - ALL
{{- end -}}

{{- /* Pod security context (omitted when runAsRoot). */ -}}
{{- define "gw.podSecurity" -}}
{{- if not (include "gw.onOpenshift" .) }}
runAsUser: 1337
runAsGroup: 1337
{{- end }}
runAsNonRoot: true
{{- end -}}

{{- /* Mounts of the user-provided secret and config map volumes. */ -}}
{{- define "gw.userVolumeMounts" -}}
{{- $gw := index .Values.gateways (include "gw.valuesKey" .) }}
{{- range $gw.secretVolumes }}
- name: {{ .name }}
  mountPath: {{ .mountPath | quote }}
  readOnly: true
{{- end }}
{{- range $gw.configVolumes }}
{{- if .mountPath }}
- name: {{ .name }}
  mountPath: {{ .mountPath | quote }}
  readOnly: true
{{- end }}
{{- end }}
{{- end -}}

{{- /* The user-provided secret and config map volumes (all optional). */ -}}
{{- define "gw.userVolumes" -}}
{{- $gw := index .Values.gateways (include "gw.valuesKey" .) }}
{{- range $gw.secretVolumes }}
- name: {{ .name }}
  secret:
    secretName: {{ .secretName | quote }}
    optional: true
{{- end }}
{{- range $gw.configVolumes }}
- name: {{ .name }}
  configMap:
    name: {{ .configMapName | quote }}
    optional: true
{{- end }}
{{- end -}}

{{- /* Pod scheduling: node affinity (always present, possibly with empty terms),
       optional pod anti-affinity, then tolerations. Rendered at pod-spec level. */ -}}
{{- define "gw.scheduling" -}}
{{- $gw := index .Values.gateways (include "gw.valuesKey" .) }}
{{- $global := .Values.global }}
{{- $selector := $gw.nodeSelector | default $global.defaultNodeSelector | default dict }}
{{- $archs := list }}
{{- range $arch, $weight := ($global.arch | default dict) }}{{ if gt (int $weight) 0 }}{{ $archs = append $archs $arch }}{{ end }}{{ end }}
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
    {{- if or $global.arch $selector }}
      nodeSelectorTerms:
      - matchExpressions:
        {{- if $global.arch }}
        - key: kubernetes.io/arch
          operator: In
          values:
          {{- range $archs }}
          - {{ . | quote }}
          {{- end }}
        {{- end }}
        {{- range $key, $val := $selector }}
        - key: {{ $key }}
          operator: In
          values:
          - {{ $val | quote }}
        {{- end }}
    {{- end }}
    preferredDuringSchedulingIgnoredDuringExecution:
    {{- range $arch := $archs }}
    - weight: {{ index $global.arch $arch | int }}
      preference:
        matchExpressions:
        - key: kubernetes.io/arch
          operator: In
          values:
          - {{ $arch | quote }}
    {{- end }}
  {{- if or $gw.podAntiAffinityLabelSelector $gw.podAntiAffinityTermLabelSelector }}
  podAntiAffinity:
    {{- with $gw.podAntiAffinityLabelSelector }}
    requiredDuringSchedulingIgnoredDuringExecution:
    {{- range . }}
    - labelSelector:
        matchExpressions:
        - key: {{ .key }}
          operator: {{ .operator }}
          {{- if .values }}
          values:
          {{- range splitList "," (toString .values) }}
          - {{ . | quote }}
          {{- end }}
          {{- end }}
      topologyKey: {{ .topologyKey }}
      {{- if .namespaces }}
      namespaces:
      {{- range splitList "," (toString .namespaces) }}
      - {{ . | quote }}
      {{- end }}
      {{- end }}
    {{- end }}
    {{- end }}
    {{- with $gw.podAntiAffinityTermLabelSelector }}
    preferredDuringSchedulingIgnoredDuringExecution:
    {{- range . }}
    - weight: 100
      podAffinityTerm:
        labelSelector:
          matchExpressions:
          - key: {{ .key }}
            operator: {{ .operator }}
            {{- if .values }}
            values:
            {{- range splitList "," (toString .values) }}
            - {{ . | quote }}
            {{- end }}
            {{- end }}
        topologyKey: {{ .topologyKey }}
    {{- end }}
    {{- end }}
  {{- end }}
{{- with ($gw.tolerations | default $global.defaultTolerations) }}
tolerations:
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- /* Value of the release and app.kubernetes.io/instance labels: the Helm release's name,
   unless global.releaseLabel names another (istioctl manifest translate sets it to istio,
   the name istioctl renders every chart with, so that objects moved under Helm keep
   their labels and their pods are not rolled). */ -}}
{{- define "istio.releaseLabel" -}}
{{- (.Values.global | default dict).releaseLabel | default .Release.Name -}}
{{- end -}}
