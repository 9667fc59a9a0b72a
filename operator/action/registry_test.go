package action_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// TestRegistryDrivesEveryComponentList: a gateway kind added to the component registry is
// picked up by validation, the values translation, the uninstall order and warnings and the
// help text with no other edit, since each derives its list from component.All.
func TestRegistryDrivesEveryComponentList(t *testing.T) {
	eastWest := component.Component{Name: "EastWestGateways", SpecKey: "eastWestGateways", Chart: "gateways/istio-ingress",
		ValuesRoot: "gateways.istio-eastwestgateway", Multi: true, Title: "East-west gateways", Icon: "↔",
		WorkloadKind: "Deployment", WorkloadName: "istio-eastwestgateway", Container: "istio-proxy", Parents: []component.Name{component.Pilot}}
	saved := component.All
	component.All = append(append([]component.Component(nil), saved...), eastWest)
	t.Cleanup(func() { component.All = saved })

	// Validation: a gateway of the new kind and its Helm-level ports.
	tree := map[string]any{"spec": map[string]any{
		"components": map[string]any{"eastWestGateways": []any{
			map[string]any{"name": "Bad_Name"},
			map[string]any{"name": "ew", "k8s": map[string]any{"service": map[string]any{"type": "Sideways"}}},
		}},
		"values": map[string]any{"gateways": map[string]any{"istio-eastwestgateway": map[string]any{
			"ports": []any{map[string]any{"port": int64(80), "targetPort": int64(80), "name": "http"}},
		}}},
	}}
	var paths []string
	for _, p := range spec.Validate(tree) {
		paths = append(paths, p.Path)
	}
	for _, want := range []string{"spec.components.eastWestGateways[0].name", "spec.components.eastWestGateways[1].k8s.service.type",
		"spec.values.gateways.istio-eastwestgateway.ports[0]"} {
		if !slices.Contains(paths, want) {
			t.Errorf("validation does not check %s; it found %v", want, paths)
		}
	}

	// Values: the instance's settings land under its dash-named values root.
	vals := render.Values(map[string]any{"spec": map[string]any{}}, component.Instance{Component: eastWest, InstanceName: "ew", Hub: "registry.example.com/mesh"})
	if got, _ := spec.Lookup(vals, "gateways", "istio-eastwestgateway", "hub"); got != "registry.example.com/mesh" {
		t.Errorf("the values root of the new kind: %v", vals["gateways"])
	}
	if got, _ := spec.Lookup(vals, "gateways", "istio-eastwestgateway", "name"); got != "ew" {
		t.Errorf("the gateway's name value: %v", vals["gateways"])
	}

	// Uninstall order and warnings: after its parent's dependents, with the other gateways;
	// its Deployment is named among the gateways removed.
	obj := func(kind, name string, c component.Name) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetAPIVersion("v1")
		o.SetKind(kind)
		o.SetNamespace("istio-system")
		o.SetName(name)
		o.SetLabels(map[string]string{ownership.LabelComponent: string(c)})
		return o
	}
	targets := install.InRemovalOrder([]*unstructured.Unstructured{
		obj("Deployment", "istiod", component.Pilot), obj("Deployment", "istio-eastwestgateway", eastWest.Name),
		obj("ConfigMap", "base", component.Base),
	})
	if got := ref.Of(targets[0]).String(); got != "Deployment/istio-system/istio-eastwestgateway" {
		t.Errorf("removal order: %s first, want the new gateway (a dependent of Pilot)", got)
	}
	in := &install.Installer{Owner: ownership.Owner{Namespace: "istio-system"}}
	warnings, err := in.UninstallWarnings(context.Background(), targets[:1], install.UninstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !slices.Contains(warnings[0].Details, "Deployment/istio-system/istio-eastwestgateway") {
		t.Errorf("uninstall warnings: %+v", warnings)
	}

	// Help text: the --component list.
	if names := strings.Join(action.ComponentNames(), ", "); !strings.HasSuffix(names, "EgressGateways, EastWestGateways") {
		t.Errorf("component names: %s", names)
	}

	// The spec's own fields stay the API's: the kind has no field of ComponentsSpec yet, so
	// resolving a spec never yields its instances (adding the field is the one edit left).
	if list, ok := (&v1alpha1.ComponentsSpec{}).Gateways(eastWest.SpecKey); ok || list != nil {
		t.Errorf("ComponentsSpec knows %s", eastWest.SpecKey)
	}
}
