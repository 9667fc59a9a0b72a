package objdiff

import (
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

func TestDiff(t *testing.T) {
	cases := []struct {
		name, live, next string
		want             []string // lines the diff must hold
		never            []string // strings it must not hold
		empty            bool
	}{
		{
			name:  "server fields and status are not changes",
			live:  "{apiVersion: v1, kind: ConfigMap, metadata: {name: a, resourceVersion: '1', generation: 1, uid: x, managedFields: [{manager: m}], annotations: {h: '1'}}, data: {k: v}}",
			next:  "{apiVersion: v1, kind: ConfigMap, metadata: {name: a, resourceVersion: '2', generation: 2, uid: x, annotations: {h: '2'}}, data: {k: v}}",
			empty: true,
		},
		{
			name: "a changed field",
			live: "{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {replicas: 1}}",
			next: "{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {replicas: 3}}",
			want: []string{"-  replicas: 1", "+  replicas: 3", "--- live", "+++ after apply"},
		},
		{
			name:  "secret values are masked, changed keys still show",
			live:  "{apiVersion: v1, kind: Secret, metadata: {name: s}, data: {same: c2VjcmV0MQ==, changed: b2xkLXNlY3JldA==, gone: Z29uZQ==}}",
			next:  "{apiVersion: v1, kind: Secret, metadata: {name: s}, data: {same: c2VjcmV0MQ==, changed: bmV3LXNlY3JldA==, added: YWRkZWQ=}, stringData: {plain: hunter2}}",
			want:  []string{"-  changed: '*** (before)'", "+  changed: '*** (after)'", "-  gone: '***'", "+  added: '***'", "+  plain: '***'"},
			never: []string{"c2VjcmV0MQ", "b2xkLXNlY3JldA", "bmV3LXNlY3JldA", "Z29uZQ", "YWRkZWQ", "hunter2"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Diff(fixture.Object(t, tc.live), fixture.Object(t, tc.next), "h")
			if err != nil {
				t.Fatal(err)
			}
			if tc.empty != (d == "") {
				t.Fatalf("diff:\n%s", d)
			}
			for _, w := range tc.want {
				if !strings.Contains(d, w+"\n") {
					t.Errorf("diff lacks %q:\n%s", w, d)
				}
			}
			for _, n := range tc.never {
				if strings.Contains(d, n) {
					t.Errorf("diff shows %q:\n%s", n, d)
				}
			}
		})
	}
}

func TestFields(t *testing.T) {
	cases := []struct {
		name, live, next string
		want             []string
	}{
		{
			name: "server fields, status and ignored annotations are not changes",
			live: "{apiVersion: v1, kind: ConfigMap, metadata: {name: a, resourceVersion: '1', annotations: {h: '1'}}, data: {k: v}, status: {x: 1}}",
			next: "{apiVersion: v1, kind: ConfigMap, metadata: {name: a, resourceVersion: '2', annotations: {h: '2'}}, data: {k: v}, status: {x: 2}}",
		},
		{
			name: "changed, added and removed fields",
			live: "{apiVersion: v1, kind: ConfigMap, metadata: {name: a, labels: {old: x}}, data: {mesh: a, gone: b}}",
			next: "{apiVersion: v1, kind: ConfigMap, metadata: {name: a, labels: {old: x, new: y}}, data: {mesh: c, added: d}}",
			want: []string{"data.added", "data.gone", "data.mesh", "metadata.labels.new"},
		},
		{
			name: "list elements by name; keys with dots bracketed",
			live: "{kind: Deployment, metadata: {name: d, annotations: {a.b/c: '1'}}, spec: {template: {spec: {containers: [{name: istio-proxy, image: a}, {name: app, image: x}]}}}}",
			next: "{kind: Deployment, metadata: {name: d, annotations: {a.b/c: '2'}}, spec: {template: {spec: {containers: [{name: app, image: x}, {name: istio-proxy, image: b}]}}}}",
			want: []string{"metadata.annotations[a.b/c]", "spec.template.spec.containers[istio-proxy].image"},
		},
		{
			name: "lists without names: by index, or whole when the length changes",
			live: "{kind: Service, metadata: {name: s}, spec: {ports: [1, 2], ips: [a]}}",
			next: "{kind: Service, metadata: {name: s}, spec: {ports: [1, 3], ips: [a, b]}}",
			want: []string{"spec.ips", "spec.ports[1]"},
		},
		{
			name: "a secret's changed keys, never its values",
			live: "{apiVersion: v1, kind: Secret, metadata: {name: s}, data: {key: c2VjcmV0, same: eA==}}",
			next: "{apiVersion: v1, kind: Secret, metadata: {name: s}, data: {key: b3RoZXI=, same: eA==}}",
			want: []string{"data.key"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Fields(fixture.Object(t, tc.live), fixture.Object(t, tc.next), "h")
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("Fields = %q, want %q", got, tc.want)
			}
		})
	}
}
