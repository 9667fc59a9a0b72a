{{- /*
Mesh config derived from the chart values (before .Values.meshConfig is laid over it), set
into the dict .out for the render scope .root: a dict, not YAML text to read back, spares a
toYaml and a fromYaml (some 50 KB of garbage).
*/ -}}
{{- define "istiod.derivedMeshConfig" -}}
{{- $mesh := .out }}
{{- with .root }}
{{- $v := .Values }}
{{- $_ := set $mesh "trustDomain" "cluster.local" }}
{{- $_ = set $mesh "rootNamespace" ($v.meshConfig.rootNamespace | default $v.global.istioNamespace) }}

{{- /* Default telemetry providers, unless meshConfig chooses its own. */}}
{{- $tel := $v.telemetry }}
{{- $telemetryOn := and (not $v.meshConfig.defaultProviders) $tel.enabled $tel.v2.enabled }}
{{- $prometheus := and $telemetryOn $tel.v2.prometheus.enabled }}
{{- $stackdriver := and $telemetryOn $tel.v2.stackdriver.enabled }}
{{- if or $prometheus $stackdriver }}
{{- $metrics := list }}
{{- if $prometheus }}{{ $metrics = append $metrics "prometheus" }}{{ end }}
{{- if $stackdriver }}{{ $metrics = append $metrics "stackdriver" }}{{ end }}
{{- $providers := dict "metrics" $metrics }}
{{- if $stackdriver }}{{ $_ := set $providers "accessLogging" (list "stackdriver") }}{{ end }}
{{- $_ := set $mesh "defaultProviders" $providers }}
{{- end }}

{{- /* Proxy defaults. */}}
{{- $proxy := dict }}
{{- with $v.global.meshID }}{{ $_ := set $proxy "meshId" (toString .) }}{{ end }}
{{- with ($v.global.proxy.variant | default $v.global.variant) }}
{{- $_ := set $proxy "image" (dict "imageType" (toString .)) }}
{{- end }}
{{- $tracer := $v.global.proxy.tracer | default "" | toString }}
{{- $tracerValues := $v.global.tracer | default dict }}
{{- if eq $tracer "zipkin" }}
{{- $_ := set $proxy "tracing" (dict "zipkin" (dict "address" (($tracerValues.zipkin | default dict).address | default (printf "zipkin.%s:9411" $v.global.istioNamespace)))) }}
{{- else if eq $tracer "datadog" }}
{{- $_ := set $proxy "tracing" (dict "datadog" (dict "address" (($tracerValues.datadog | default dict).address | default "$(HOST_IP):8126"))) }}
{{- else if eq $tracer "lightstep" }}
{{- $ls := $tracerValues.lightstep | default dict }}
{{- $_ := set $proxy "tracing" (dict "lightstep" (dict "address" $ls.address "accessToken" $ls.accessToken)) }}
{{- else if eq $tracer "stackdriver" }}
{{- $sd := $tracerValues.stackdriver | default dict }}
{{- $_ := set $proxy "tracing" (dict "stackdriver" (dict
      "debug" ($sd.debug | default false)
      "maxNumberOfAttributes" ($sd.maxNumberOfAttributes | default 200)
      "maxNumberOfAnnotations" ($sd.maxNumberOfAnnotations | default 200)
      "maxNumberOfMessageEvents" ($sd.maxNumberOfMessageEvents | default 200))) }}
{{- else if ne $tracer "none" }}
{{- /* Unknown tracer: an empty tracing section. */}}
{{- $_ := set $proxy "tracing" nil }}
{{- end }}

{{- /* Where proxies find istiod. */}}
{{- $discovery := printf "istiod%s.%s.svc:15012" (include "istiod.revSuffix" .) .Release.Namespace }}
{{- if $v.global.remotePilotAddress }}
{{- if and $v.istiodRemote.enabled $v.istiodRemote.enabledLocalInjectorIstiod }}
{{- /* xDS comes from the primary istiod, reached through the istiod-remote Service. */}}
{{- $discovery = printf "istiod-remote.%s.svc:15012" .Release.Namespace }}
{{- else }}
{{- $discovery = printf "istiod.%s.svc:15012" .Release.Namespace }}
{{- end }}
{{- end }}
{{- $_ := set $proxy "discoveryAddress" $discovery }}
{{- $_ := set $mesh "defaultConfig" $proxy }}
{{- end }}
{{- end -}}
