{{- /* Which gateway flavour this chart renders. Everything else in templates/ is shared
       verbatim with the sibling ingress chart; only this file tells them apart. */ -}}
{{- define "gw.valuesKey" -}}istio-egressgateway{{- end -}}
{{- define "gw.componentName" -}}EgressGateways{{- end -}}
{{- define "gw.extraPortsKey" -}}egressPorts{{- end -}}
