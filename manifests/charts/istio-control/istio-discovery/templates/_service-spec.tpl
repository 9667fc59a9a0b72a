{{- /* Ports and selector of the istiod Service; shared by the revision-tag Services. */ -}}
{{- define "istiod.serviceSpec" -}}
ports:
  # xDS over plain gRPC
  - name: grpc-xds
    port: 15010
    protocol: TCP
  # xDS / CA over mTLS
  - name: https-dns
    port: 15012
    protocol: TCP
  # injection and validation webhooks
  - name: https-webhook
    port: 443
    targetPort: 15017
    protocol: TCP
  # Prometheus metrics
  - name: http-monitoring
    port: 15014
    protocol: TCP
selector:
  app: istiod
  {{- if .Values.revision }}
  istio.io/rev: {{ .Values.revision | quote }}
  {{- else }}
  # The default revision selects on istio=pilot so it never picks up a canary's pods.
  istio: pilot
  {{- end }}
{{- with .Values.ipFamilyPolicy }}
ipFamilyPolicy: {{ . }}
{{- end }}
{{- with .Values.ipFamilies }}
ipFamilies:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.trafficDistribution }}
trafficDistribution: {{ . }}
{{- end }}
{{- end -}}
