package admission

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func fromYAML(t *testing.T, docs string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(docs, "\n---\n") {
		o := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &o.Object); err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

// TestNeeded: the ConfigMaps and Secrets a workload's pods cannot start without, by field
// path; optional ones, those the install renders and those istiod publishes are not needed.
func TestNeeded(t *testing.T) {
	const dep = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: istiod, namespace: istio-system}\nspec:\n  template:\n    spec:\n"
	for _, tc := range []struct {
		name string
		objs string
		want []string // Path -> Object
	}{
		{"secret volume", dep + "      volumes: [{name: v, secret: {secretName: vault}}]",
			[]string{"spec.template.spec.volumes[0].secret.secretName -> Secret/istio-system/vault"}},
		{"optional secret volume", dep + "      volumes: [{name: v, secret: {secretName: cacerts, optional: true}}]", nil},
		{"optional false is needed", dep + "      volumes: [{name: v, configMap: {name: c, optional: false}}]",
			[]string{"spec.template.spec.volumes[0].configMap.name -> ConfigMap/istio-system/c"}},
		{"projected sources", dep + "      volumes: [{name: v, projected: {sources: [{serviceAccountToken: {path: t}}, {secret: {name: s}}, {configMap: {name: c, optional: true}}, {configMap: {name: d}}]}}]",
			[]string{"spec.template.spec.volumes[0].projected.sources[1].secret.name -> Secret/istio-system/s",
				"spec.template.spec.volumes[0].projected.sources[3].configMap.name -> ConfigMap/istio-system/d"}},
		{"env valueFrom", dep + "      containers: [{name: discovery, env: [{name: A, value: x}, {name: T, valueFrom: {secretKeyRef: {name: tok, key: k}}}, {name: C, valueFrom: {configMapKeyRef: {name: cm, key: k, optional: true}}}, {name: P, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]}]",
			[]string{"spec.template.spec.containers[0].env[1].valueFrom.secretKeyRef.name -> Secret/istio-system/tok"}},
		{"envFrom of an init container", dep + "      initContainers: [{name: init, envFrom: [{configMapRef: {name: cni}}, {secretRef: {name: s, optional: true}}]}]",
			[]string{"spec.template.spec.initContainers[0].envFrom[0].configMapRef.name -> ConfigMap/istio-system/cni"}},
		{"rendered by the install", dep + "      containers: [{name: c, envFrom: [{configMapRef: {name: cni}}]}]\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cni, namespace: istio-system}", nil},
		{"rendered in another namespace", dep + "      containers: [{name: c, envFrom: [{configMapRef: {name: cni}}]}]\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cni, namespace: other}",
			[]string{"spec.template.spec.containers[0].envFrom[0].configMapRef.name -> ConfigMap/istio-system/cni"}},
		{"published by istiod", dep + "      volumes: [{name: v, configMap: {name: istio-ca-root-cert}}]", nil},
		{"a secret of istiod's name", dep + "      volumes: [{name: v, secret: {secretName: istio-ca-root-cert}}]",
			[]string{"spec.template.spec.volumes[0].secret.secretName -> Secret/istio-system/istio-ca-root-cert"}},
		{"daemonset", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: cni, namespace: kube-system}\nspec:\n  template:\n    spec:\n      volumes: [{name: v, secret: {secretName: s}}]",
			[]string{"spec.template.spec.volumes[0].secret.secretName -> Secret/kube-system/s"}},
		{"cronjob", "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: j, namespace: ns}\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          volumes: [{name: v, secret: {secretName: s}}]",
			[]string{"spec.jobTemplate.spec.template.spec.volumes[0].secret.secretName -> Secret/ns/s"}},
		{"not a workload", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec:\n  volumes: [{name: v, secret: {secretName: s}}]", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range Needed(fromYAML(t, tc.objs)) {
				got = append(got, r.Path+" -> "+r.Object())
				if !strings.Contains(r.Workload, "/") {
					t.Errorf("workload %q", r.Workload)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("Needed =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}
