package install_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/render"
)

// TestSummarize: the counts per component, in install order then pruned-only components in
// registry order; a pruned object counts under the one instance of its component the run
// installs, under the component itself when there are several; unchanged objects are
// counted but not listed.
func TestSummarize(t *testing.T) {
	inst := func(name component.Name, instance string) component.Instance {
		c, ok := component.Get(name)
		if !ok {
			t.Fatalf("no component %s", name)
		}
		return component.Instance{Component: c, InstanceName: instance}
	}
	ch := func(obj, comp string, a install.Action) install.Change {
		return install.Change{Object: obj, Component: comp, Action: a, DryRun: true}
	}
	cases := []struct {
		name      string
		manifests []render.Manifest
		changes   []install.Change
		// want: "total" then one "key: create/update/unchanged/prune [objects]" per component.
		want   []string
		writes bool
	}{
		{
			name:      "nothing to change",
			manifests: []render.Manifest{{Instance: inst(component.Base, "")}, {Instance: inst(component.Pilot, "")}},
			changes:   []install.Change{ch("CRD/a", "Base", install.Unchanged), ch("Deployment/ns/istiod", "Pilot", install.Unchanged)},
			want:      []string{"0/0/2/0", "Base: 0/0/1/0 []", "Pilot: 0/0/1/0 []"},
		},
		{
			name: "a pruned object joins the only instance of its component",
			manifests: []render.Manifest{{Instance: inst(component.Pilot, "")},
				{Instance: inst(component.IngressGateways, "istio-ingressgateway")}},
			changes: []install.Change{
				ch("Deployment/ns/istiod", "Pilot", install.Configured),
				ch("Deployment/ns/istio-ingressgateway", "IngressGateways/istio-ingressgateway", install.Unchanged),
				ch("HorizontalPodAutoscaler/ns/istio-ingressgateway", "IngressGateways", install.Pruned),
				ch("HorizontalPodAutoscaler/ns/istiod", "Pilot", install.Pruned),
			},
			want: []string{"0/1/1/2",
				"Pilot: 0/1/0/1 [Deployment/ns/istiod HorizontalPodAutoscaler/ns/istiod]",
				"IngressGateways/istio-ingressgateway: 0/0/1/1 [HorizontalPodAutoscaler/ns/istio-ingressgateway]"},
			writes: true,
		},
		{
			name: "several instances, or none: under the component, pruned-only ones in registry order",
			manifests: []render.Manifest{{Instance: inst(component.Pilot, "")},
				{Instance: inst(component.IngressGateways, "a")}, {Instance: inst(component.IngressGateways, "b")}},
			changes: []install.Change{
				ch("Deployment/ns/a", "IngressGateways/a", install.Created),
				ch("Deployment/ns/b", "IngressGateways/b", install.Unchanged),
				ch("Deployment/ns/eg", "EgressGateways", install.Pruned),
				ch("Deployment/ns/old", "IngressGateways", install.Pruned),
			},
			want: []string{"1/0/1/2", "Pilot: 0/0/0/0 []", "IngressGateways/a: 1/0/0/0 [Deployment/ns/a]",
				"IngressGateways/b: 0/0/1/0 []", "IngressGateways: 0/0/0/1 [Deployment/ns/old]",
				"EgressGateways: 0/0/0/1 [Deployment/ns/eg]"},
			writes: true,
		},
	}
	counts := func(create, update, same, prune int) string {
		return fmt.Sprintf("%d/%d/%d/%d", create, update, same, prune)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := install.Summarize(tc.manifests, tc.changes)
			got := []string{counts(s.Create, s.Update, s.Unchanged, s.Prune)}
			for _, c := range s.Components {
				var objs []string
				for _, o := range s.Objects[c.Component] {
					objs = append(objs, o.Object)
				}
				got = append(got, fmt.Sprintf("%s: %s [%s]", c.Component, counts(c.Create, c.Update, c.Unchanged, c.Prune), strings.Join(objs, " ")))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("Summarize:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if s.Writes() != tc.writes {
				t.Errorf("Writes() = %v, want %v", s.Writes(), tc.writes)
			}
		})
	}
	// The default tag: created or moved is a write, pointing where it points already is not.
	for _, tc := range []struct {
		step  install.TagStep
		write bool
	}{{install.TagStep{Revision: "default"}, true}, {install.TagStep{Revision: "canary", From: "default"}, true}, {install.TagStep{Revision: "default", From: "default"}, false}} {
		s := install.Summarize(nil, nil)
		s.DefaultTag = &tc.step
		if s.Writes() != tc.write {
			t.Errorf("default tag %+v: Writes() = %v, want %v", tc.step, s.Writes(), tc.write)
		}
	}
}

// TestWriting: the objects the cluster must admit are those a run creates or configures.
func TestWriting(t *testing.T) {
	obj := func(kind, name string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetAPIVersion("v1")
		o.SetKind(kind)
		o.SetNamespace("ns")
		o.SetName(name)
		return o
	}
	c, _ := component.Get(component.Pilot)
	pilot := component.Instance{Component: c}
	ms := []render.Manifest{{Instance: pilot, Objects: []*unstructured.Unstructured{obj("ConfigMap", "a"), obj("ConfigMap", "b"), obj("Service", "c"), obj("Service", "d")}}}
	changes := []install.Change{
		{Object: "ConfigMap/ns/a", Component: pilot.Key(), Action: install.Created},
		{Object: "ConfigMap/ns/b", Component: pilot.Key(), Action: install.Unchanged},
		{Object: "Service/ns/c", Component: pilot.Key(), Action: install.Configured},
		{Object: "Service/ns/d", Component: "Other", Action: install.Created},
		{Object: "Service/ns/e", Component: pilot.Key(), Action: install.Pruned},
	}
	got := install.Writing(ms, changes)
	var names []string
	for _, o := range got[0].Objects {
		names = append(names, ref.Of(o).String())
	}
	if len(got) != 1 || got[0].Instance.Key() != pilot.Key() || strings.Join(names, " ") != "ConfigMap/ns/a Service/ns/c" {
		t.Errorf("Writing = %v %v", got[0].Instance, names)
	}
}
