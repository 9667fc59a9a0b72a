package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"

	"sigs.k8s.io/yaml"
)

// realPod is a kwok selector key (a jq query) that reads "real" for a pod the bed runs
// istiod for (see podKey) and "kwok" for any other.
const realPod = `if ([.spec.containers[]? | select(.name == "` + istiodContainer + `")] | length) > 0 ` +
	`and (.metadata.labels["` + OptOutLabel + `"] // "") != "off" then "real" else "kwok" end`

// startNotReady is the status kwok gives a pod the bed runs istiod for, in place of its
// pod-ready stage: running, with an IP, its containers not ready until realistiod says so.
const startNotReady = `{{ $now := Now }}
conditions:
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: Initialized
- lastTransitionTime: {{ $now | Quote }}
  status: "False"
  reason: ContainersNotReady
  type: Ready
- lastTransitionTime: {{ $now | Quote }}
  status: "False"
  reason: ContainersNotReady
  type: ContainersReady
containerStatuses:
{{ range .spec.containers }}
- image: {{ .image | Quote }}
  name: {{ .name | Quote }}
  ready: false
  started: false
  restartCount: 0
  state:
    waiting:
      reason: ContainerCreating
{{ end }}
{{ with NodeIPsWith .spec.nodeName }}
hostIP: {{ index . 0 | Quote }}
hostIPs:
{{ range . }}
- ip: {{ . | Quote }}
{{ end }}
{{ end }}
{{ with PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
podIP: {{ index . 0 | Quote }}
podIPs:
{{ range . }}
- ip: {{ . | Quote }}
{{ end }}
{{ end }}
phase: Running
startTime: {{ $now | Quote }}
`

// stages prints kwok's stages (the file named by args[0]) with its pod-ready stage kept
// off the pods the bed runs istiod for, and a stage of ours that starts those not ready.
func stages(args []string, out io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: realistiod stages KWOK-STAGES.yaml")
	}
	b, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	docs := regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1)
	var ready map[string]any
	var kept [][]byte
	for _, d := range docs {
		if len(bytes.TrimSpace([]byte(d))) == 0 {
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			return err
		}
		if name, _, _ := nested(m, "metadata", "name"); name == "pod-ready" {
			ready = m
			sel, _, _ := nestedMap(m, "spec", "selector")
			exprs, _ := sel["matchExpressions"].([]any)
			sel["matchExpressions"] = append(exprs, map[string]any{"key": realPod, "operator": "In", "values": []any{"kwok"}})
		}
		out, err := yaml.Marshal(m)
		if err != nil {
			return err
		}
		kept = append(kept, out)
	}
	if ready == nil {
		return fmt.Errorf("%s has no pod-ready stage", args[0])
	}
	ours := map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1",
		"kind":       "Stage",
		"metadata":   map[string]any{"name": "pod-real-istiod-start"},
		"spec": map[string]any{
			"resourceRef": map[string]any{"apiGroup": "v1", "kind": "Pod"},
			"selector": map[string]any{"matchExpressions": []any{
				map[string]any{"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"},
				map[string]any{"key": ".status.phase", "operator": "In", "values": []any{"Pending"}},
				map[string]any{"key": realPod, "operator": "In", "values": []any{"real"}},
			}},
			"next": map[string]any{"statusTemplate": startNotReady},
		},
	}
	o, err := yaml.Marshal(ours)
	if err != nil {
		return err
	}
	kept = append(kept, o)
	_, err = out.Write(bytes.Join(kept, []byte("---\n")))
	return err
}

func nested(m map[string]any, path ...string) (string, bool, error) {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = mm[p]
	}
	s, ok := cur.(string)
	return s, ok, nil
}

func nestedMap(m map[string]any, path ...string) (map[string]any, bool, error) {
	cur := m
	for _, p := range path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	return cur, true, nil
}
