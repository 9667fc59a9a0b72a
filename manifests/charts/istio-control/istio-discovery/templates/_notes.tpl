{{- /* NOTES.txt: of .paths (dotted paths), the ones set in .root.Values to a non-null value,
       one per line. One include for all of them: an include per path cost a millisecond. */ -}}
{{- define "istiod.notes.setPaths" -}}
{{- $values := .root.Values }}
{{- range $path := .paths }}
{{- $node := $values }}
{{- $found := true }}
{{- range splitList "." $path }}
{{- if not (and (kindIs "map" $node) (hasKey $node .)) }}
{{- $found = false }}
{{- break }}
{{- end }}
{{- $node = index $node . }}
{{- end }}
{{- if and $found (not (kindIs "invalid" $node)) }}
{{ $path }}
{{- end }}
{{- end }}
{{- end -}}
