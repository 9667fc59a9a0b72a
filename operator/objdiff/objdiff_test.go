package objdiff

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

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
			d, err := Diff(obj(t, tc.live), obj(t, tc.next), "h")
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
