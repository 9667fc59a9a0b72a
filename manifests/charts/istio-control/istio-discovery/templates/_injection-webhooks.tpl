{{- /*
Injection webhook entries, shared by the revision's MutatingWebhookConfiguration and the
revision-tag ones. Called with (dict "root" $ "match" <revision or tag value> "withDefault" <bool>).

Selection rules, in the order they are listed:
  rev.namespace.  namespace labelled istio.io/rev=<match> (and no istio-injection label)
  rev.object.     unlabelled namespace, pod labelled istio.io/rev=<match>
  namespace.      namespace labelled istio-injection=enabled               (default revision only)
  object.         unlabelled namespace, pod sidecar.istio.io/inject=true   (default revision only)
  auto.           no labels at all, with enableNamespacesByDefault         (default revision only)
Pods labelled sidecar.istio.io/inject=false are never selected.
*/ -}}
{{- define "istiod.injectionWebhooks" -}}
{{- $root := .root }}
{{- $v := $root.Values }}
{{- $remote := $v.istiodRemote }}

{{- $notDisabled := dict "key" "sidecar.istio.io/inject" "operator" "NotIn" "values" (list "false") }}
{{- $noInjectionLabel := dict "key" "istio-injection" "operator" "DoesNotExist" }}
{{- $noRevLabel := dict "key" "istio.io/rev" "operator" "DoesNotExist" }}
{{- $revIs := dict "key" "istio.io/rev" "operator" "In" "values" (list .match) }}

{{- $selections := list
      (list "rev.namespace." (list $revIs $noInjectionLabel) (list $notDisabled))
      (list "rev.object." (list $noRevLabel $noInjectionLabel) (list $notDisabled $revIs)) }}
{{- if .withDefault }}
{{- $selections = append $selections (list "namespace."
      (list (dict "key" "istio-injection" "operator" "In" "values" (list "enabled")))
      (list $notDisabled)) }}
{{- $selections = append $selections (list "object."
      (list $noInjectionLabel $noRevLabel)
      (list (dict "key" "sidecar.istio.io/inject" "operator" "In" "values" (list "true")) $noRevLabel)) }}
{{- if $v.sidecarInjectorWebhook.enableNamespacesByDefault }}
{{- $selections = append $selections (list "auto."
      (list $noInjectionLabel $noRevLabel (dict "key" "kubernetes.io/metadata.name" "operator" "NotIn" "values" (list "kube-system" "kube-public" "kube-node-lease" "local-path-storage")))
      (list (dict "key" "sidecar.istio.io/inject" "operator" "DoesNotExist") $noRevLabel)) }}
{{- end }}
{{- end }}

{{- /* Written out, not built as a list for toYaml: toYaml (JSON, then YAML parsed and printed
       again) allocated 400 KB for these few lines, an eighth of the chart's render. Values
       go through toJson, so each keeps its type (a string stays quoted, an unset one null). */}}
{{- range $selections }}
- name: {{ printf "%ssidecar-injector.istio.io" (index . 0) | toJson }}
  clientConfig:
    {{- if $remote.injectionURL }}
    url: {{ $remote.injectionURL | toJson }}
    {{- else }}
    service:
      name: {{ include "istiod.fullname" $root | toJson }}
      namespace: {{ $root.Release.Namespace | toJson }}
      path: {{ $remote.injectionPath | toJson }}
      port: 443
    {{- end }}
    {{- with $remote.injectionCABundle }}
    caBundle: {{ . | toJson }}
    {{- end }}
  sideEffects: None
  rules:
  - operations: ["CREATE"]
    apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["pods"]
  failurePolicy: Fail
  reinvocationPolicy: {{ toString $v.sidecarInjectorWebhook.reinvocationPolicy | toJson }}
  admissionReviewVersions: ["v1"]
  {{- range $selector, $expressions := dict "namespaceSelector" (index . 1) "objectSelector" (index . 2) }}
  {{ $selector }}:
    matchExpressions:
    {{- range $expressions }}
    - key: {{ .key | toJson }}
      operator: {{ .operator | toJson }}
      {{- if hasKey . "values" }}
      values:
      {{- range .values }}
      - {{ . | toJson }}
      {{- end }}
      {{- end }}
    {{- end }}
  {{- end }}
{{- end }}
{{- end -}}
