{{- /* Which gateway flavour this chart renders. Everything else in templates/ is shared
       verbatim with the sibling egress chart; only this file tells them apart. */ -}}
{{- define "gw.valuesKey" -}}istio-ingressgateway{{- end -}}
{{- define "gw.componentName" -}}IngressGateways{{- end -}}
{{- define "gw.extraPortsKey" -}}ingressPorts{{- end -}}
