package render

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/component"
)

const pilotObjects = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: istiod, namespace: istio-system}
spec:
  replicas: 1
  strategy: {rollingUpdate: {maxSurge: 100%, maxUnavailable: 25%}}
  template:
    metadata: {annotations: {a: "1"}}
    spec:
      containers:
      - name: discovery
        image: docker.io/istio/pilot:1.30.0
        env: [{name: A, value: "1"}, {name: B, value: "2"}]
        resources: {requests: {cpu: 500m, memory: 2Gi}}
        args: [discovery, --monitoringAddr=:15014]
      - name: sidecar
        image: other
---
apiVersion: v1
kind: Service
metadata: {name: istiod, namespace: istio-system}
spec:
  ports: [{name: grpc-xds, port: 15010}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: istiod, namespace: istio-system}
spec: {minReplicas: 1, maxReplicas: 5}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: istiod, namespace: istio-system}
spec: {minAvailable: 1}
`

func pilot(t *testing.T, k8sYAML string) (component.Instance, []*unstructured.Unstructured, map[string]any) {
	t.Helper()
	objs, err := ParseObjects([]byte(pilotObjects))
	if err != nil {
		t.Fatal(err)
	}
	var k v1alpha1.KubernetesResources
	if err := sigsyaml.UnmarshalStrict([]byte(k8sYAML), &k); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := sigsyaml.Unmarshal([]byte(k8sYAML), &raw); err != nil {
		t.Fatal(err)
	}
	c, _ := component.Get(component.Pilot)
	return component.Instance{Component: c, Namespace: "istio-system", K8s: &k}, objs, raw
}

func TestK8sSettings(t *testing.T) {
	for _, tc := range []struct {
		name, k8s, kind, path, want string
	}{
		{"replicaCount", "replicaCount: 3", "Deployment", "spec.replicas", "3"},
		{"env merges by name", "env: [{name: B, value: x}, {name: C, value: cc}]", "Deployment",
			"spec.template.spec.containers.0.env", `[{"name":"A","value":"1"},{"name":"B","value":"x"},{"name":"C","value":"cc"}]`},
		{"resources on the main container", "resources: {limits: {cpu: '2'}}", "Deployment",
			"spec.template.spec.containers.0.resources", `{"limits":{"cpu":"2"},"requests":{"cpu":"500m","memory":"2Gi"}}`},
		{"other containers untouched", "resources: {limits: {cpu: '2'}}", "Deployment", "spec.template.spec.containers.1", `{"image":"other","name":"sidecar"}`},
		{"nodeSelector", "nodeSelector: {disk: ssd}", "Deployment", "spec.template.spec.nodeSelector", `{"disk":"ssd"}`},
		{"tolerations", "tolerations: [{key: k, operator: Exists}]", "Deployment", "spec.template.spec.tolerations", `[{"key":"k","operator":"Exists"}]`},
		{"podAnnotations merge", "podAnnotations: {b: '2'}", "Deployment", "spec.template.metadata.annotations", `{"a":"1","b":"2"}`},
		{"priorityClassName", "priorityClassName: high", "Deployment", "spec.template.spec.priorityClassName", `"high"`},
		{"imagePullPolicy", "imagePullPolicy: Always", "Deployment", "spec.template.spec.containers.0.imagePullPolicy", `"Always"`},
		{"securityContext", "securityContext: {runAsNonRoot: true}", "Deployment", "spec.template.spec.securityContext", `{"runAsNonRoot":true}`},
		{"strategy", "strategy: {rollingUpdate: {maxSurge: 1}}", "Deployment", "spec.strategy.rollingUpdate.maxSurge", `1`},
		{"readinessProbe", "readinessProbe: {periodSeconds: 7}", "Deployment", "spec.template.spec.containers.0.readinessProbe", `{"periodSeconds":7}`},
		{"affinity", "affinity: {podAntiAffinity: {}}", "Deployment", "spec.template.spec.affinity", `{"podAntiAffinity":{}}`},
		{"volumes", "volumes: [{name: extra, emptyDir: {}}]", "Deployment", "spec.template.spec.volumes", `[{"emptyDir":{},"name":"extra"}]`},
		{"volumeMounts", "volumeMounts: [{name: extra, mountPath: /x}]", "Deployment", "spec.template.spec.containers.0.volumeMounts", `[{"mountPath":"/x","name":"extra"}]`},
		{"hpaSpec", "hpaSpec: {maxReplicas: 9}", "HorizontalPodAutoscaler", "spec", `{"maxReplicas":9,"minReplicas":1}`},
		{"pdb both bounds drops minAvailable", "podDisruptionBudget: {maxUnavailable: 1}", "PodDisruptionBudget", "spec", `{"maxUnavailable":1}`},
		{"service", "service: {type: NodePort}", "Service", "spec.type", `"NodePort"`},
		{"serviceAnnotations", "serviceAnnotations: {lb: internal}", "Service", "metadata.annotations", `{"lb":"internal"}`},
		{"overlay set by selector", "overlays: [{kind: Deployment, name: istiod, patches: [{path: 'spec.template.spec.containers.[name:discovery].args.[1]', value: '--monitoringAddr=:9999'}]}]",
			"Deployment", "spec.template.spec.containers.0.args", `["discovery","--monitoringAddr=:9999"]`},
		{"overlay delete scalar item", "overlays: [{kind: Deployment, name: istiod, patches: [{path: 'spec.template.spec.containers.[name:discovery].args.[:discovery]'}]}]",
			"Deployment", "spec.template.spec.containers.0.args", `["--monitoringAddr=:15014"]`},
		{"overlay new field", "overlays: [{kind: Service, name: istiod, patches: [{path: spec.externalTrafficPolicy, value: Local}]}]",
			"Service", "spec.externalTrafficPolicy", `"Local"`},
		{"overlay delete field", "overlays: [{kind: Deployment, name: istiod, patches: [{path: spec.strategy}]}]",
			"Deployment", "spec", `{"replicas":1,"template":{"metadata":{"annotations":{"a":"1"}},"spec":{"containers":[{"args":["discovery","--monitoringAddr=:15014"],"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],"image":"docker.io/istio/pilot:1.30.0","name":"discovery","resources":{"requests":{"cpu":"500m","memory":"2Gi"}}},{"image":"other","name":"sidecar"}]}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inst, objs, raw := pilot(t, tc.k8s)
			if err := ApplyK8sSettings(objs, inst, raw, ""); err != nil {
				t.Fatal(err)
			}
			obj := find(objs, tc.kind, "istiod")
			got := at(t, obj.Object, tc.path)
			var want any
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			gotJSON, _ := json.Marshal(got)
			var gotNorm any
			_ = json.Unmarshal(gotJSON, &gotNorm)
			if !reflect.DeepEqual(gotNorm, want) {
				t.Errorf("%s = %s, want %s", tc.path, gotJSON, tc.want)
			}
		})
	}
}

func TestK8sSettingsRevisionedName(t *testing.T) {
	inst, objs, raw := pilot(t, "replicaCount: 3")
	// With a revision the patch targets istiod-<rev>, so the unrevisioned object is untouched.
	if err := ApplyK8sSettings(objs, inst, raw, "canary"); err != nil {
		t.Fatal(err)
	}
	if got := at(t, find(objs, "Deployment", "istiod").Object, "spec.replicas"); got != int64(1) {
		t.Errorf("replicas = %v", got)
	}
}

func TestOverlayErrors(t *testing.T) {
	for _, tc := range []struct{ k8s, want string }{
		{"overlays: [{kind: Deployment, name: nope, patches: [{path: a, value: 1}]}]", `no Deployment "nope"`},
		{"overlays: [{kind: Deployment, name: istiod, patches: [{path: 'spec.template.spec.containers.[name:nope].image', value: x}]}]", "no such item"},
		{"overlays: [{kind: Deployment, name: istiod, patches: [{path: 'spec.replicas.x', value: 1}]}]", "not an object"},
		{"overlays: [{kind: Deployment, name: istiod, patches: [{path: 'a..b', value: 1}]}]", "empty key"},
	} {
		inst, objs, raw := pilot(t, tc.k8s)
		err := ApplyK8sSettings(objs, inst, raw, "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.k8s, err, tc.want)
		}
	}
}

// at reads a dotted path; numeric segments index lists.
func at(t *testing.T, m map[string]any, path string) any {
	t.Helper()
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[k]
		case []any:
			i := 0
			for _, ch := range k {
				i = i*10 + int(ch-'0')
			}
			cur = c[i]
		default:
			t.Fatalf("%s: %T at %s", path, cur, k)
		}
	}
	return cur
}
